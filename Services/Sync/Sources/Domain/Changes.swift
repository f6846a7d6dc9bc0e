import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The changelog exchange of `POST /sync`: a device's queued operations in, the changes after its
/// anchor (or the latest state at anchor 0) out.
struct Changes: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let content: RichContent

    init(repositories: SyncRepositories, views: Views, content: RichContent) {
        self.repositories = repositories
        self.views = views
        self.content = content
    }

    struct SyncAnswer: Encodable, Sendable {
        var anchor: JSONValue
        var more: Bool
        var operations: [OperationObject]
    }

    /// Where the device stands: a sequence number of its changelog, or a paged snapshot.
    enum SyncAnchor {
        case seq(Int64)
        case snapshot(ChangelogRepository.SnapshotCursor)
        /// A paged snapshot that has reached the user's channels.
        case channels(ChannelRepository.SnapshotCursor)

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
                } else if let cursor = ChannelRepository.SnapshotCursor(text: text) {
                    self = .channels(cursor)
                } else {
                    throw Self.malformed
                }
            default:
                throw Self.malformed
            }
        }

        static let malformed = APIError.invalid("anchor", "anchor is a value that an earlier /sync returned, or 0.")
    }

    /// The changes of the scope's user's changelog after `anchor`, at most `limit`; at anchor 0,
    /// a page of the latest state chosen by `policy`.
    func changes(
        after anchor: SyncAnchor, limit: Int, policy: ChangelogRepository.SyncPolicy, partialCount: Int, _ scope: Scope
    ) async throws -> SyncAnswer {
        let (app, user, logger) = (scope.app, scope.user, scope.logger)
        return try await repositories.read(logger: logger) { connection in
            var presenter = views.presenter(scope, connection)
            let last = try await repositories.changelog.lastSeq(app: app, user: user, connection, logger)
            switch anchor {
            case .seq(let seq) where seq > 0:
                guard seq <= last else {
                    throw APIError.invalid("anchor", "The anchor \(seq) is ahead of this user's changelog (at \(last)).")
                }
                let (changes, more) = try await repositories.changelog.changes(
                    after: seq, limit: limit, presenter: &presenter, connection, logger)
                return SyncAnswer(anchor: .number(Double(changes.last?.seq ?? seq)), more: more, operations: changes)
            case .seq:
                return try await snapshot(cursor: nil, seq: last, policy, partialCount, limit, &presenter, connection, logger)
            case .snapshot(let cursor):
                guard cursor.seq <= last else { throw SyncAnchor.malformed }
                return try await snapshot(
                    cursor: cursor, seq: cursor.seq, policy, partialCount, limit, &presenter, connection, logger)
            case .channels(let cursor):
                guard cursor.seq <= last else { throw SyncAnchor.malformed }
                return try await channelSnapshot(cursor, policy, partialCount, limit, done: [], &presenter, connection, logger)
            }
        }
    }

    private func snapshot(
        cursor: ChangelogRepository.SnapshotCursor?, seq: Int64, _ policy: ChangelogRepository.SyncPolicy, _ partialCount: Int,
        _ limit: Int,
        _ presenter: inout Presenter, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> SyncAnswer {
        let (operations, next) = try await repositories.changelog.snapshot(
            cursor: cursor, seq: seq, policy: policy, partialCount: partialCount, limit: limit, presenter: &presenter,
            connection, logger)
        if let next { return SyncAnswer(anchor: .string(next.text), more: true, operations: operations) }
        return try await channelSnapshot(
            .start(seq: seq), policy, partialCount, limit, done: operations, &presenter, connection, logger)
    }

    /// The channels' part of a snapshot, after the conversations' operations `done` of this page.
    private func channelSnapshot(
        _ cursor: ChannelRepository.SnapshotCursor, _ policy: ChangelogRepository.SyncPolicy, _ partialCount: Int,
        _ limit: Int, done: [OperationObject], _ presenter: inout Presenter, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> SyncAnswer {
        let finished = SyncAnswer(anchor: .number(Double(cursor.seq)), more: false, operations: done)
        guard let user = presenter.viewer,
            try await repositories.channels.hasChannels(app: presenter.app, user: user, connection, logger)
        else { return finished }
        guard done.count < limit else {
            // The page is full: the channels start the next one.
            return SyncAnswer(anchor: .string(cursor.text), more: true, operations: done)
        }
        let (operations, next) = try await repositories.channels.snapshot(
            cursor: cursor, policy: policy, partialCount: partialCount, limit: limit - done.count, presenter: &presenter,
            connection, logger)
        return SyncAnswer(
            anchor: next.map { .string($0.text) } ?? .number(Double(cursor.seq)), more: next != nil,
            operations: done + operations)
    }

    /// Applies a device's queued operations in one transaction: all of them or none.
    func apply(_ operations: [ClientOperation], _ scope: Scope) async throws {
        let (app, user, logger) = (scope.app, scope.user, scope.logger)
        var resolved: [ClientOperation] = []
        for operation in operations {
            guard case .newMessage(var message) = operation.kind else {
                resolved.append(operation)
                continue
            }
            message.parts = try await content.resolve(message.parts, owner: user, scope)
            resolved.append(ClientOperation(index: operation.index, kind: .newMessage(message)))
        }
        try await repositories.write(logger: logger) { connection in
            for operation in resolved {
                do {
                    try await repositories.messages.apply(operation, app: app, user: user, connection, logger)
                } catch let error as APIError {
                    throw error.about(operation: operation.index)
                }
            }
        }
    }
}
