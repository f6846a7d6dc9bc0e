import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Conversations: created by a user or by the app, read as one user sees them or in the app's
/// system view, changed, deleted and left, and read up to a point.
struct Conversations: Sendable {
    private let repositories: SyncRepositories
    private let views: Views
    private let tags: RequestTags

    init(repositories: SyncRepositories, views: Views) {
        self.repositories = repositories
        self.views = views
        tags = RequestTags(repository: repositories.requestTags)
    }

    /// A conversation as the scope's viewer sees it (the app: the system view); 404 if they may not.
    func conversation(_ id: UUID, _ scope: Scope) async throws -> ConversationObject {
        try await repositories.read(logger: scope.logger) { connection in
            let (record, _) = try await repositories.conversations.access(
                app: scope.app, conversation: id, caller: scope.caller, forWriting: false, connection, scope.logger)
            var presenter = views.presenter(scope, connection)
            return try await presenter.conversations([record])[0]
        }
    }

    /// A page of the scope's user's conversations.
    func list(order: ConversationRepository.ConversationOrder, paging: Paging, _ scope: Scope) async throws -> Page<
        ConversationObject
    > {
        try await repositories.read(logger: scope.logger) { connection in
            let (records, total) = try await repositories.conversations.conversations(
                app: scope.app, user: scope.user, order: order, fromID: paging.fromID, pageSize: paging.pageSize, connection,
                scope.logger)
            var presenter = views.presenter(scope, connection)
            return Page(items: try await presenter.conversations(records), total: total)
        }
    }

    /// What a create names: the participants, as identity ids or user ids, and the rest.
    struct NewConversationInput: Decodable, Sendable {
        var id: String?
        var participants: [JSONValue]?
        var distinct: Bool?
        var metadata: JSONValue?
        /// False: participants do not see each other's delivery and read states.
        var receiptsEnabled: Bool?

        enum CodingKeys: String, CodingKey {
            case id, participants, distinct, metadata
            case receiptsEnabled = "receipts_enabled"
        }

        /// The Client API's keys; the Server API has no client-chosen `id` (it de-duplicates
        /// with `If-None-Match` instead).
        static let keys: Set<String> = ["id", "participants", "distinct", "metadata", "receipts_enabled"]
        static let serverKeys: Set<String> = ["participants", "distinct", "metadata", "receipts_enabled"]
    }

    /// Creates a conversation (`POST /conversations`, WebSocket `Conversation.create`, the Server
    /// API's `POST /apps/<app>/conversations` with its optional request `tag`). A distinct
    /// conversation with these participants that exists already is answered instead (200); with
    /// other metadata it is 409 `conflict`; a client-chosen id in use, 409 `id_in_use`.
    func create(_ input: NewConversationInput, tag: UUID? = nil, _ scope: Scope) async throws -> Created<ConversationObject> {
        if scope.caller == .app, input.participants?.isEmpty ?? true {
            throw APIError(.missingProperty, "A conversation needs participants.", property: "participants")
        }
        let users = try (input.participants ?? []).enumerated().map { try userID(named: $1, property: "participants.\($0)") }
        var reserved: UUID?
        if let tag {
            let id = try await tags.reserve(tag, collection: .conversations, scope)
            if try await tags.exists(LayerID(.conversations, id), scope) { return try await repeated(id, scope) }
            reserved = id
        }
        let new = try ConversationRepository.NewConversation(
            id: reserved ?? LayerID.clientChosen(input.id, as: .conversations), participants: users,
            distinct: input.distinct ?? true, metadata: input.metadata, receiptsEnabled: input.receiptsEnabled ?? true)
        var outcome: ConversationRepository.CreateOutcome
        do {
            outcome = try await repositories.conversations.createConversation(
                app: scope.app, caller: scope.caller, new, logger: scope.logger)
        } catch let error as PSQLError where error.sqlState == "23505" && reserved != nil {
            // A concurrent request with the same tag created it under the reserved id first.
            return try await repeated(reserved!, scope)
        }
        switch outcome {
        case .idInUse(let id) where id == reserved:
            return try await repeated(id, scope)
        case .existing(let id) where id == reserved:
            // The distinct conversation that matched is the one a concurrent repeat just made.
            outcome = .created(id)
        default:
            break
        }
        return try await created(outcome, scope)
    }

    /// The answer to a repeated request tag: the conversation created the first time.
    private func repeated(_ id: UUID, _ scope: Scope) async throws -> Created<ConversationObject> {
        Created(object: try await conversation(id, scope), isNew: true)
    }

    /// The conversation a create came to: the new one, or the distinct one that matched. Throws
    /// 409 `conflict` (with it) when that one has other metadata, or 409 `id_in_use` (with the
    /// conversation if the caller may see it).
    private func created(
        _ outcome: ConversationRepository.CreateOutcome, _ scope: Scope
    ) async throws -> Created<ConversationObject> {
        switch outcome {
        case .created(let id):
            return Created(object: try await conversation(id, scope), isNew: true)
        case .existing(let id):
            return Created(object: try await conversation(id, scope), isNew: false)
        case .conflict(let id):
            throw APIError(
                .conflict, "A distinct conversation with these participants exists with other metadata.",
                data: try await jsonValue(conversation(id, scope)))
        case .idInUse(let id):
            let existing = try? await conversation(id, scope)
            throw APIError(.idInUse, "The requested conversation id is already in use.", data: try existing.map(jsonValue))
        }
    }

    /// Applies Layer-Patch operations to the conversation's participants and metadata.
    func patch(_ id: UUID, operations: [LayerPatchOperation], _ scope: Scope) async throws {
        try await repositories.conversations.patchConversation(
            app: scope.app, caller: scope.caller, id: id, operations: operations, logger: scope.logger)
    }

    /// Deletes the conversation for everybody or from the user's devices, the user leaving it
    /// with `leave`. The app always deletes for everybody; deleting a deleted one again succeeds.
    func delete(_ id: UUID, mode: ConversationRepository.DeletionMode, leave: Bool, _ scope: Scope) async throws {
        try await repositories.conversations.deleteConversation(
            app: scope.app, caller: scope.caller, id: id, mode: mode, leave: leave, logger: scope.logger)
    }

    /// Everything up to `position` (all of it without one) is read for the scope's user.
    func markAllRead(_ id: UUID, position: Int64?, _ scope: Scope) async throws {
        if let position, position < 0 {
            throw APIError.invalid("position", "position is a message position, 0 or more.")
        }
        try await repositories.messages.markAllRead(
            app: scope.app, user: scope.user, conversation: id, position: position, logger: scope.logger)
    }

    /// The participants of a conversation of the app that is not deleted; 404 otherwise.
    @discardableResult
    func requireExisting(_ id: UUID, _ scope: Scope) async throws -> [ParticipantRecord] {
        try await repositories.read(logger: scope.logger) { connection in
            try await repositories.conversations.access(
                app: scope.app, conversation: id, caller: .app, forWriting: false, connection, scope.logger
            ).1
        }
    }
}
