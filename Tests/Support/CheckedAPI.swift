import AsyncHTTPClient
import LayerModels
import LayerServer
import NIOCore
import NIOHTTP1
import Testing

/// Whoever a request is made as: the headers that authenticate it.
public protocol Credentials: Sendable {
    var auth: [(String, String)] { get }
}

/// A client of one service that checks what it gets against the OpenAPI document the service
/// serves. Every service's conformance suite checks through these, so that a service that drifts
/// from its document fails in the same way as any other would.
public protocol CheckedAPI: Sendable {
    /// A client of the service the document describes.
    var client: TestClient { get }
    var document: OpenAPIDocument { get }
}

extension CheckedAPI {
    /// Sends a request (as `user`, when given), expects `status`, and checks the response (and,
    /// when it succeeded, the JSON body sent) against the operation `documentedAs method path`.
    @discardableResult
    public func call(
        _ method: HTTPMethod, _ path: String, _ status: Int, as user: (any Credentials)? = nil,
        headers: [(String, String)] = [], json: JSONValue? = nil, body: ByteBuffer? = nil,
        contentType: String = MediaType.json, accept: String? = MediaType.layerJSON, documentedAs: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        let headers = (user?.auth ?? []) + headers
        let response =
            if let json {
                try await client.request(method, path, headers: headers, json: json, contentType: contentType, accept: accept)
            } else {
                try await client.request(method, path, headers: headers, body: body, contentType: contentType, accept: accept)
            }
        check(
            response, documentedAs ?? method.rawValue, path, status, sent: json, contentType: contentType,
            sourceLocation: sourceLocation)
        return response
    }

    /// A `call` of `PATCH` with a Layer-Patch body.
    @discardableResult
    public func patch(
        _ path: String, _ status: Int, as user: (any Credentials)? = nil, headers: [(String, String)] = [],
        json operations: JSONValue, accept: String? = MediaType.layerJSON, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> TestResponse {
        try await call(
            .PATCH, path, status, as: user, headers: headers, json: operations, contentType: MediaType.layerPatch,
            accept: accept, sourceLocation: sourceLocation)
    }

    public func check(
        _ response: TestResponse, _ method: String, _ path: String, _ status: Int, sent: JSONValue? = nil,
        contentType: String = MediaType.json, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(method) \(path): \(response.text)", sourceLocation: sourceLocation)
        var problems = document.problems(response, method, path)
        if let sent, (200..<300).contains(response.status) {
            problems += document.requestProblems(sent, contentType: contentType, method, path)
        }
        #expect(problems.isEmpty, "\(method) \(path) → \(response.status): \(problems)", sourceLocation: sourceLocation)
    }

    /// Checks `value` against a schema of the document, e.g. one that `data` of an error holds.
    public func expect(_ value: JSONValue?, is schema: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let problems = document.validate(value ?? .null, ["$ref": .string("#/components/schemas/\(schema)")])
        #expect(problems.isEmpty, "\(schema): \(problems)", sourceLocation: sourceLocation)
    }

    /// Calls every documented operation with its parameters' examples and no credentials, with
    /// and without `Accept`: none is an unknown endpoint, every answer is documented, and without
    /// `Accept` exactly the operations that `refusesWithoutAccept` picks answer 406. `alsoExpect`
    /// looks at every answer for what only one service promises.
    public func callEveryOperation(
        refusesWithoutAccept: (_ operation: JSONValue) -> Bool = { $0["responses"]?["406"] != nil },
        alsoExpect: (_ method: String, _ path: String, TestResponse) -> Void = { _, _, _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (template, method, operation) in document.operations {
            let path = document.examplePath(template, operation)
            #expect(!path.contains("{"), "\(template): a path parameter without an example", sourceLocation: sourceLocation)
            let documents406 = refusesWithoutAccept(operation)
            for accept in [MediaType.layerJSON, nil] {
                let response = try await client.request(HTTPMethod(rawValue: method.uppercased()), path, accept: accept)
                #expect(response.errorID != "invalid_endpoint", "\(method) \(path) is not routed", sourceLocation: sourceLocation)
                alsoExpect(method, path, response)
                let problems = document.problems(response, method, path)
                #expect(problems.isEmpty, "\(method) \(path) → \(response.status): \(problems)", sourceLocation: sourceLocation)
                if accept == nil {
                    #expect(
                        (response.status == 406) == documents406, "\(method) \(path) without Accept → \(response.status)",
                        sourceLocation: sourceLocation)
                }
            }
        }
    }

    /// Requests the router does not serve: each answers its status (405 for a path served with
    /// other methods, 404 for one not served at all) with the shared error, and none is documented.
    public func expectUnserved(
        _ requests: [(HTTPMethod, String, Int)], alsoExpect: (_ status: Int, TestResponse) -> Void = { _, _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for (method, path, status) in requests {
            let response = try await client.request(method, path)
            #expect(response.status == status, "\(method.rawValue) \(path)", sourceLocation: sourceLocation)
            #expect(
                response.errorID == (status == 405 ? "method_not_allowed" : "invalid_endpoint"), sourceLocation: sourceLocation)
            alsoExpect(status, response)
            #expect(
                document.operation(method.rawValue, path) == nil, "\(method.rawValue) \(path) is documented",
                sourceLocation: sourceLocation)
            expect(response.json, is: "Error", sourceLocation: sourceLocation)
        }
    }
}

extension OpenAPIDocument {
    /// `template` with its path parameters (of the path or of `operation`) replaced by their examples.
    public func examplePath(_ template: String, _ operation: JSONValue) -> String {
        var path = template
        for case .array(let list)? in [root["paths"]?[template]?["parameters"], operation["parameters"]] {
            for parameter in list.map(resolve) where parameter["in"] == "path" {
                let name = parameter["name"]?.stringValue ?? ""
                let example = parameter["example"]?.stringValue ?? ""
                path = path.replacingOccurrences(of: "{\(name)}", with: example)
            }
        }
        return path
    }

    /// Every documented answer promises a request id, and every error has the shared `Error`
    /// shape (a 401 may be a `Challenge`). Two answers are exempt: a switch to the WebSocket
    /// protocol, after which there is no HTTP response to carry the header, and readiness's 503,
    /// which reports its checks.
    public func expectSharedResponseShapes(sourceLocation: SourceLocation = #_sourceLocation) {
        for (path, method, operation) in operations {
            guard case .object(let responses)? = operation["responses"] else {
                Issue.record("\(method) \(path): no responses", sourceLocation: sourceLocation)
                continue
            }
            for (status, response) in responses.map({ ($0, resolve($1)) }) where status != "101" {
                #expect(
                    resolve(response["headers"]?["X-Request-Id"] ?? nil)["required"] == true, "\(method) \(path) \(status)",
                    sourceLocation: sourceLocation)
                guard let code = Int(status), code >= 400, !(path == "/health/ready" && code == 503) else { continue }
                let schema = response["content"]?["application/json"]?["schema"]?["$ref"]
                #expect(
                    schema == "#/components/schemas/Error" || (code == 401 && schema == "#/components/schemas/Challenge"),
                    "\(method) \(path) \(status) has schema \(String(describing: schema))", sourceLocation: sourceLocation)
            }
        }
    }

    /// Every component of the service's own carries its name (`prefix`: `NamesPerson`,
    /// `VoIPCall`), so that the suite's merged document can hold every service's components.
    public func expectOwnComponentsNamed(prefix: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let common = try OpenAPIDocument(yaml: OpenAPISpec.common().yaml())
        guard case .object(let sections)? = root["components"] else { return }
        for case (let section, .object(let components)) in sections {
            for name in components.keys where common.root["components"]?[section]?[name] == nil {
                #expect(
                    name.hasPrefix(prefix), "components.\(section).\(name) is not named after the service",
                    sourceLocation: sourceLocation)
            }
        }
    }
}

extension CheckedAPI {
    /// Serves `plan` — a second instance of this document's service whose auth service is nowhere
    /// (its auth URL names port 1, where nothing listens) — and checks what it answers then, as
    /// every service that checks sessions with auth must: each of `requests` (authenticated ones
    /// among them) 503 `service_unavailable`, and readiness 503 naming auth `unavailable`, all as
    /// documented. `more` looks further at the orphan.
    public func checkWithoutAuth(
        _ plan: ServicePlan, internalTokens: InternalTokens, requests: [(HTTPMethod, String, [(String, String)])],
        more: @Sendable (TestClient) async throws -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await HTTPClient.withImpatientClient { impatient in
            try await LiveServer.run([plan], settings: ServerSettings(internalTokens: internalTokens), http: impatient) {
                server in
                let orphan = TestClient(baseURL: server.baseURL, http: server.http)
                for (method, path, headers) in requests {
                    let response = try await orphan.request(method, path, headers: headers)
                    check(response, method.rawValue, path, 503, sourceLocation: sourceLocation)
                    #expect(response.errorID == "service_unavailable", sourceLocation: sourceLocation)
                }
                let ready = try await orphan.request(.GET, "/health/ready", accept: nil)
                check(ready, "GET", "/health/ready", 503, sourceLocation: sourceLocation)
                #expect(ready.json?["checks"]?["auth"] == "unavailable", sourceLocation: sourceLocation)
                try await more(orphan)
            }
        }
    }
}
