import Hummingbird
import LayerModels
import LayerServer
import PostgresNIO
import Testing

/// The public routes of a process that hosts `services`, as `method /path/{parameter}`: the
/// operational routes and every service's own, without the internal API, which no document
/// describes. The OpenAPI conformance tests compare them with the document the process serves.
public func publicRoutes(of services: [any LayerService], postgres: PostgresClient) -> Set<String> {
    // The same routes as `buildApplication` registers, on a router of their own to read them from.
    let router = Router(context: LayerRequestContext.self)
    let routes = LimitedRoutes(router, limits: .usual(deadline: .seconds(10)))
    OperationalRoutes(postgres: postgres, readiness: [:], openAPI: "", links: []).addRoutes(to: routes)
    for service in services {
        service.addRoutes(to: routes)
    }
    return Set(
        router.routes.map { "\($0.method.rawValue.lowercased()) \($0.path.description)" }
            .filter { !$0.contains(" /internal/") })
}

extension OpenAPIDocument {
    /// Every operation as `method /path/{parameter}`, to compare with `publicRoutes(of:postgres:)`.
    public var operationNames: Set<String> {
        Set(operations.map { "\($0.method) \($0.path)" })
    }

    /// The document describes exactly `routes` (as `publicRoutes(of:postgres:)` gives them).
    public func expectDescribes(exactly routes: Set<String>, sourceLocation: SourceLocation = #_sourceLocation) {
        let documented = operationNames
        #expect(
            routes.subtracting(documented).isEmpty, "served but not documented: \(routes.subtracting(documented).sorted())",
            sourceLocation: sourceLocation)
        #expect(
            documented.subtracting(routes).isEmpty, "documented but not served: \(documented.subtracting(routes).sorted())",
            sourceLocation: sourceLocation)
    }

    /// No two operations share an `operationId`; client generators name their methods after it.
    public func expectUniqueOperationIDs(sourceLocation: SourceLocation = #_sourceLocation) {
        let operationIDs = operations.map {
            $0.operation["operationId"]?.stringValue ?? "\($0.method) \($0.path) has no operationId"
        }
        #expect(
            Set(operationIDs).count == operationIDs.count, "operationIds repeat: \(operationIDs.sorted())",
            sourceLocation: sourceLocation)
    }

    /// The `$ref`s anywhere in the document that lead nowhere.
    public var unresolvedReferences: [String] {
        var unresolved: [String] = []
        func walk(_ value: JSONValue) {
            switch value {
            case .object(let object):
                if case .string(let reference)? = object["$ref"], resolve(value) == .null { unresolved.append(reference) }
                object.values.forEach(walk)
            case .array(let items): items.forEach(walk)
            default: break
            }
        }
        walk(root)
        return unresolved
    }
}
