import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// `POST /sync`: a device hands in its queued operations and its anchor, and gets back every
/// change of its user's changelog after that anchor (or the latest state at anchor 0).
struct SyncController: Sendable {
    let domain: SyncDomain

    static let defaultLimit = 500
    static let maxLimit = 5000
    static let maxOperations = 500

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.post("sync", use: sync)
    }

    struct Body: Decodable {
        var anchor: JSONValue?
        var limit: Int?
        var policy: String?
        var partialCount: Int?
        var operations: [JSONValue]?

        enum CodingKeys: String, CodingKey {
            case anchor, limit, policy, operations
            case partialCount = "partial_count"
        }
        static let keys: Set<String> = ["anchor", "limit", "policy", "partial_count", "operations"]
    }

    @Sendable func sync(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try await domain.userScope(request, context)
        let body = try await request.decodeJSON(Body.self, limit: 4 * 1024 * 1024, allowedKeys: Body.keys)
        let anchor = try Changes.SyncAnchor(body.anchor)
        let limit = body.limit ?? Self.defaultLimit
        guard (1...Self.maxLimit).contains(limit) else {
            throw APIError.invalid("limit", "limit is a whole number from 1 to \(Self.maxLimit).")
        }
        guard let policy = ChangelogRepository.SyncPolicy(rawValue: body.policy ?? "unread_only") else {
            throw APIError.invalid("policy", "policy is complete, unread_only or partial.")
        }
        let partialCount = body.partialCount ?? 20
        guard (1...1000).contains(partialCount) else {
            throw APIError.invalid("partial_count", "partial_count is a whole number from 1 to 1000.")
        }
        let operations = try ClientOperation.parse(body.operations ?? [], limit: Self.maxOperations)
        if !operations.isEmpty {
            try await domain.changes.apply(operations, scope)
        }

        return try Response.json(
            try await domain.changes.changes(after: anchor, limit: limit, policy: policy, partialCount: partialCount, scope))
    }
}

extension APIError {
    /// The same error, its property prefixed with the operation it came from (`operations.3.status`).
    func about(operation index: Int) -> APIError { under("operations.\(index)") }

    /// The same error, its property put under `prefix` (`3` + `parts.0.body` = `3.parts.0.body`),
    /// or `prefix` itself when it named none.
    func under(_ prefix: String) -> APIError {
        var copy = self
        let property = body.data?["property"]?.stringValue
        var data: [String: JSONValue] = [:]
        if case .object(let object)? = body.data { data = object }
        data["property"] = .string(prefix + (property.map { ".\($0)" } ?? ""))
        copy.body.data = .object(data)
        return copy
    }
}
