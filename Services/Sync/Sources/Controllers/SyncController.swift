import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging

/// `POST /sync`: a device hands in its queued operations and its anchor, and gets back every
/// change of its user's changelog after that anchor (or the latest state at anchor 0).
struct SyncController: Sendable {
    let service: Messaging

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

    struct Answer: Encodable {
        var anchor: JSONValue
        var more: Bool
        var operations: [OperationObject]
    }

    /// Where the device stands: a sequence number of its changelog, or a paged snapshot.
    enum Anchor {
        case seq(Int64)
        case snapshot(ChangelogRepository.SnapshotCursor)

        init(_ value: JSONValue?) throws {
            switch value {
            case nil, .null?:
                self = .seq(0)
            case .number(let number)?:
                guard let seq = Int64(exactly: number), seq >= 0 else { throw Self.malformed }
                self = .seq(seq)
            case .string(let text)?:
                if let seq = Int64(text), seq >= 0 {
                    self = .seq(seq)
                } else if let cursor = ChangelogRepository.SnapshotCursor(text: text) {
                    self = .snapshot(cursor)
                } else {
                    throw Self.malformed
                }
            default:
                throw Self.malformed
            }
        }

        static let malformed = APIError.invalid("anchor", "anchor is a value that an earlier /sync returned, or 0.")
    }

    @Sendable func sync(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let (user, app) = try await service.caller(context)
        let body = try await request.decodeJSON(Body.self, limit: 4 * 1024 * 1024, allowedKeys: Body.keys)
        let anchor = try Anchor(body.anchor)
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
            try await apply(operations, app: app, user: user, logger: context.logger)
        }

        let urls = service.urls(request)
        let store = service.store
        let answer = try await store.read(logger: context.logger) { connection in
            var presenter = service.presenter(app: app, viewer: user, urls: urls, connection, context.logger)
            let last = try await store.changelog.lastSeq(app: app, user: user, connection, context.logger)
            switch anchor {
            case .seq(let seq) where seq > 0:
                guard seq <= last else {
                    throw APIError.invalid("anchor", "The anchor \(seq) is ahead of this user's changelog (at \(last)).")
                }
                let (changes, more) = try await store.changelog.changes(after: seq, limit: limit, presenter: &presenter, context.logger)
                return Answer(anchor: .number(Double(changes.last?.seq ?? seq)), more: more, operations: changes)
            case .seq:
                return try await snapshot(cursor: nil, seq: last, policy, partialCount, limit, &presenter, context.logger)
            case .snapshot(let cursor):
                guard cursor.seq <= last else { throw Anchor.malformed }
                return try await snapshot(cursor: cursor, seq: cursor.seq, policy, partialCount, limit, &presenter, context.logger)
            }
        }
        return try Response.json(answer)
    }

    private func snapshot(
        cursor: ChangelogRepository.SnapshotCursor?, seq: Int64, _ policy: ChangelogRepository.SyncPolicy, _ partialCount: Int, _ limit: Int,
        _ presenter: inout Presenter, _ logger: Logger
    ) async throws -> Answer {
        let (operations, next) = try await service.store.changelog.snapshot(
            cursor: cursor, seq: seq, policy: policy, partialCount: partialCount, limit: limit, presenter: &presenter, logger)
        return Answer(
            anchor: next.map { .string($0.text) } ?? .number(Double(seq)), more: next != nil, operations: operations)
    }

    /// Applies a device's queued operations in one transaction: all of them or none.
    private func apply(_ operations: [ClientOperation], app: UUID, user: String, logger: Logger) async throws {
        let store = service.store
        var resolved: [ClientOperation] = []
        for operation in operations {
            guard case .newMessage(var message) = operation.kind else {
                resolved.append(operation)
                continue
            }
            message.parts = try await store.content.resolveContent(app: app, owner: user, parts: message.parts, logger: logger)
            resolved.append(ClientOperation(index: operation.index, kind: .newMessage(message)))
        }
        try await store.write(logger: logger) { connection in
            for operation in resolved {
                do {
                    try await store.messages.apply(operation, app: app, user: user, connection, logger)
                } catch let error as APIError {
                    throw error.about(operation: operation.index)
                }
            }
        }
    }
}

extension APIError {
    /// The same error, its property prefixed with the operation it came from (`operations.3.status`).
    func about(operation index: Int) -> APIError {
        var copy = self
        let property = body.data?["property"]?.stringValue
        var data: [String: JSONValue] = [:]
        if case .object(let object)? = body.data { data = object }
        data["property"] = .string("operations.\(index)" + (property.map { ".\($0)" } ?? ""))
        copy.body.data = .object(data)
        return copy
    }
}
