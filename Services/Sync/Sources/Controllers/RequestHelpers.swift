import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer

// What the Client API and the Server API read alike from a request.

extension HTTPField.Name {
    static let ifNoneMatch = Self("If-None-Match")!
}

extension Request {
    /// `mode` of a deletion: `all_participants` or `my_devices` (`destroy=true` is the old
    /// spelling of `all_participants`).
    func deletionMode() throws -> ConversationRepository.DeletionMode {
        guard let mode = try deletionModeIfGiven() else {
            throw APIError(.missingProperty, "A deletion needs mode=all_participants or mode=my_devices.", property: "mode")
        }
        return mode
    }

    /// `mode` of a deletion if the request gives one (a channel message needs none).
    func deletionModeIfGiven() throws -> ConversationRepository.DeletionMode? {
        let query = uri.queryParameters
        if let mode = query["mode"] {
            guard let parsed = ConversationRepository.DeletionMode(rawValue: String(mode)) else {
                throw APIError.invalid("mode", "mode is all_participants or my_devices.")
            }
            return parsed
        }
        return query["destroy"].map(String.init) == "true" ? .allParticipants : nil
    }

    func booleanQuery(_ name: String) throws -> Bool {
        guard let value = uri.queryParameters[Substring(name)] else { return false }
        switch value.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.invalid(name, "\(name) is true or false.")
        }
    }

    /// `sort_by` of a conversation list: `created_at` (the default) or `last_message`.
    func conversationOrder() throws -> ConversationRepository.ConversationOrder {
        let sort = uri.queryParameters["sort_by"].map(String.init) ?? ConversationRepository.ConversationOrder.createdAt.rawValue
        guard let order = ConversationRepository.ConversationOrder(rawValue: sort) else {
            throw APIError.invalid("sort_by", "sort_by is created_at or last_message.")
        }
        return order
    }

    /// The optional `{"position"}` of `mark_all_read`.
    func markAllReadPosition() async throws -> Int64? {
        struct Body: Decodable { var position: Int64? }
        return try await decodeOptionalJSON(Body.self)?.position
    }

    /// The `{"type": "delivery" | "read"}` of a receipt.
    func receiptStatus() async throws -> ReceiptStatus {
        struct Body: Decodable { var type: String }
        let body = try await decodeJSON(Body.self, allowedKeys: ["type"])
        guard let status = ReceiptStatus(name: body.type), status > .sent else {
            throw APIError.invalid("type", "A receipt's type is 'delivery' or 'read'.")
        }
        return status
    }
}

extension Request {
    /// The most users one bulk follow names.
    static let maxFollowedAtOnce = 1000

    /// The body of a bulk follow: a JSON array of user ids or identity ids (or objects with `id`
    /// or `user_id`); an element that names no user is 422 naming its index.
    func followedUsers() async throws -> [String] {
        let values = try await decodeJSON([JSONValue].self, limit: 256 * 1024)
        guard values.count <= Self.maxFollowedAtOnce else {
            throw APIError.invalid("body", "A bulk follow names at most \(Self.maxFollowedAtOnce) users.")
        }
        return try values.enumerated().map { try userID(named: $1, property: String($0)) }
    }
}

extension Parameters {
    /// A followed user in the path: a user id or an identity id (URL-encoded); 422 naming the
    /// parameter when it is neither.
    func followedUser(_ name: String) throws -> String {
        try userID(fromText: decoded(name), property: name)
    }
}

extension Response {
    /// The answer to a create: 201 with a new object, 200 with the existing one it found.
    static func created<Object: Encodable>(_ created: Created<Object>, location: String? = nil) throws -> Response {
        var response = try Response.json(created.object, status: created.isNew ? .created : .ok)
        if let location { response.headers[.location] = location }
        return response
    }

    /// The answer to a send: 201 with the message, or 202 with a delayed send.
    static func sent(_ sent: Messages.Sent) throws -> Response {
        switch sent {
        case .now(let message): try Response.json(message, status: .created)
        case .later(let scheduled): try Response.json(scheduled, status: .accepted)
        }
    }
}

/// Paging of a channel's members: `page_size` (1…500, the most the Web XDK asks for) and
/// `from_id`, the last membership of the previous page (`layer:///channels/<id>/members/<user>`,
/// an identity id or a bare user id).
struct MemberPaging: Sendable {
    static let maxPageSize = 500
    var pageSize = MemberPaging.maxPageSize
    var fromUser: String?

    init(_ request: Request) throws {
        let query = request.uri.queryParameters
        if let text = query["page_size"] {
            guard let size = Int(String(text)), (1...Self.maxPageSize).contains(size) else {
                throw APIError.invalid("page_size", "page_size is a whole number from 1 to \(Self.maxPageSize).")
            }
            pageSize = size
        }
        if let text = query["from_id"] {
            let raw = String(text).removingPercentEncoding ?? String(text)
            if raw.hasPrefix("layer:///channels/"), let range = raw.range(of: "/members/") {
                let user = String(raw[range.upperBound...])
                fromUser = user.removingPercentEncoding ?? user
            } else {
                fromUser = try userID(fromText: raw, property: "from_id")
            }
        }
    }
}

extension MessageSearch {
    static let maxWords = 16
    static let maxQueryLength = 1000

    /// `GET /search`: `q` (required: the words), and the filters `conversation` (an id),
    /// `sender` (an identity id or a user id), `mime_type` (a part of that type), `from` and `to`
    /// (times, `from` included, `to` not). 422 naming the parameter for anything malformed.
    init(_ request: Request) throws {
        let text = request.queryText
        guard let q = text("q") else { throw APIError(.missingProperty, "A search needs q, the words to find.", property: "q") }
        guard q.count <= Self.maxQueryLength else {
            throw APIError.invalid("q", "q is at most \(Self.maxQueryLength) characters.")
        }
        // Words are runs of letters and digits, as PostgreSQL's parser reads the messages.
        words = q.split { !$0.isLetter && !$0.isNumber }.map(String.init)
        guard !words.isEmpty else { throw APIError.invalid("q", "q holds no word to search for.") }
        guard words.count <= Self.maxWords else { throw APIError.invalid("q", "q holds at most \(Self.maxWords) words.") }
        if let value = text("conversation") {
            guard let id = LayerID(parsing: value, as: .conversations) else {
                throw APIError.invalid("conversation", "conversation is a conversation id.")
            }
            conversation = id.uuid
        }
        sender = try text("sender").map { try userID(fromText: $0, property: "sender") }
        if let value = text("mime_type") {
            guard !value.isEmpty, value.utf8.count <= 256 else {
                throw APIError.invalid("mime_type", "mime_type is a MIME type of at most 256 bytes.")
            }
            mimeType = value
        }
        from = try request.queryTime("from")
        to = try request.queryTime("to")
    }
}
