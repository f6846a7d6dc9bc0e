import Foundation
import LayerModels
import LayerTesting
import NIOHTTP1

/// Requests of the app's backend through the Server API, to paths relative to `/apps/<app>`.
struct ServerClient: Credentials {
    let appID: String
    let token: String
    let client: TestClient

    var auth: [(String, String)] { [("Authorization", "Bearer \(token)")] }

    func request(
        _ method: HTTPMethod, _ path: String, _ json: JSONValue? = nil, headers: [(String, String)] = [],
        contentType: String = MediaType.json
    ) async throws -> TestResponse {
        let url = "/apps/\(appID)\(path)"
        if let json {
            return try await client.request(method, url, headers: auth + headers, json: json, contentType: contentType)
        }
        return try await client.request(method, url, headers: auth + headers)
    }

    func get(_ path: String) async throws -> TestResponse {
        try await request(.GET, path)
    }

    func post(_ path: String, _ json: JSONValue, tag: String? = nil) async throws -> TestResponse {
        try await request(.POST, path, json, headers: tag.map { [("If-None-Match", $0)] } ?? [])
    }

    func put(_ path: String, _ json: JSONValue) async throws -> TestResponse {
        try await request(.PUT, path, json)
    }

    func patch(_ path: String, _ operations: JSONValue) async throws -> TestResponse {
        try await request(.PATCH, path, operations, contentType: MediaType.layerPatch)
    }

    func delete(_ path: String) async throws -> TestResponse {
        try await request(.DELETE, path)
    }

    /// Creates a conversation of `users` and returns its id; fails unless 201/200.
    func conversation(_ users: [String], distinct: Bool = false, metadata: JSONValue? = nil) async throws -> String {
        let response = try await post("/conversations", conversationBody(users, distinct: distinct, metadata: metadata))
        return try createdID(response, of: "POST /apps/…/conversations", statuses: [200, 201])
    }

    /// Sends a text message from `sender` (a `sender_id` or `sender` object) and returns its id.
    func send(_ text: String, to conversation: String, sender: [String: JSONValue], tag: String? = nil) async throws -> String {
        try createdID(try await sendRaw(text, to: conversation, sender: sender, tag: tag), of: "sending as the app")
    }

    func sendRaw(_ text: String, to conversation: String, sender: [String: JSONValue], tag: String? = nil) async throws
        -> TestResponse
    {
        try await post("/\(path(conversation))/messages", .object(sender.merging(textMessage(text)) { $1 }), tag: tag)
    }
}

/// `sender_id` of a user.
func senderIdentity(_ user: String) -> [String: JSONValue] { ["sender_id": .string(LayerID.identity(userID: user))] }

/// The ids in a list response.
func listedIDs(_ response: TestResponse) -> [String] {
    response.json?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
}
