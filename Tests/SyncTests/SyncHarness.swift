import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerSync
import LayerTesting
import NIOCore
import NIOHTTP1
import Testing

/// The auth and sync services on one listener (as `layer dev` runs them), with an app of their
/// own; a test signs users in and acts as them, or as the app's backend.
struct SyncHarness: Sendable {
    let fixture: AuthFixture

    static func run<T: Sendable>(
        settings: SyncSettings = SyncSettings(), server: ServerSettings? = nil,
        _ body: @Sendable (SyncHarness) async throws -> T
    ) async throws -> T {
        try await AuthFixture.run(settings: server, withSync: settings) { fixture in
            try await body(SyncHarness(fixture: fixture))
        }
    }

    var client: TestClient { fixture.client }
    var appID: String { fixture.app.id.lowercased }

    /// Signs `name` in and returns a client that acts as them.
    func user(_ name: String, claims: [String: JSONValue] = [:]) async throws -> UserClient {
        UserClient(id: name, token: try await fixture.session(user: name, claims: claims), client: client)
    }

    /// Alice and Bob signed in, and the distinct conversation Alice started with Bob: where most
    /// tests of one conversation begin.
    func aliceAndBobInAConversation() async throws -> (alice: UserClient, bob: UserClient, conversation: String) {
        let alice = try await user("alice")
        let bob = try await user("bob")
        return (alice, bob, try await alice.conversation(with: ["bob"]))
    }

    /// A client of the Server API with a fresh token of the app.
    func server() async throws -> ServerClient {
        ServerClient(appID: appID, token: try await fixture.serverAPIToken(), client: client)
    }
}

/// Requests as one signed-in user.
struct UserClient: Credentials {
    let id: String
    let token: String
    let client: TestClient

    var identityID: String { LayerID.identity(userID: id) }
    var auth: [(String, String)] { AuthFixture.sessionHeader(token) }

    func get(_ path: String) async throws -> TestResponse {
        try await client.request(.GET, path, headers: auth)
    }

    func post(_ path: String, _ json: JSONValue) async throws -> TestResponse {
        try await client.request(.POST, path, headers: auth, json: json)
    }

    /// `PUT` without a body, as the SDKs follow a user or join a channel.
    func put(_ path: String) async throws -> TestResponse {
        try await client.request(.PUT, path, headers: auth)
    }

    func patch(_ path: String, _ operations: JSONValue) async throws -> TestResponse {
        try await client.request(.PATCH, path, headers: auth, json: operations, contentType: MediaType.layerPatch)
    }

    func delete(_ path: String) async throws -> TestResponse {
        try await client.request(.DELETE, path, headers: auth)
    }

    /// Creates a conversation and returns its id (the full URI); fails the test unless 201/200.
    func conversation(
        with others: [String], distinct: Bool = true, metadata: JSONValue? = nil
    ) async throws -> String {
        let response = try await post("/conversations", conversationBody(others, distinct: distinct, metadata: metadata))
        return try createdID(response, of: "POST /conversations", statuses: [200, 201])
    }

    /// Sends a text message and returns it; fails the test unless 201.
    func send(_ text: String, to conversation: String, id: String? = nil) async throws -> JSONValue {
        let response = try await sendRaw(text, to: conversation, id: id)
        guard response.status == 201, let json = response.json else {
            throw FixtureError("sending a message answered \(response.status): \(response.text)")
        }
        return json
    }

    func sendRaw(_ text: String, to conversation: String, id: String? = nil) async throws -> TestResponse {
        var body = textMessage(text)
        if let id { body["id"] = .string(id) }
        return try await post("/\(path(conversation))/messages", .object(body))
    }

    /// `POST /sync`; fails the test unless 200.
    func sync(
        anchor: JSONValue = 0, operations: [JSONValue] = [], limit: Int? = nil, policy: String? = nil,
        partialCount: Int? = nil
    ) async throws -> JSONValue {
        let response = try await syncRaw(
            anchor: anchor, operations: operations, limit: limit, policy: policy, partialCount: partialCount)
        guard response.status == 200, let json = response.json else {
            throw FixtureError("POST /sync answered \(response.status): \(response.text)")
        }
        return json
    }

    func syncRaw(
        anchor: JSONValue = 0, operations: [JSONValue] = [], limit: Int? = nil, policy: String? = nil,
        partialCount: Int? = nil
    ) async throws -> TestResponse {
        var body: [String: JSONValue] = ["anchor": anchor, "operations": .array(operations)]
        if let limit { body["limit"] = .number(Double(limit)) }
        if let policy { body["policy"] = .string(policy) }
        if let partialCount { body["partial_count"] = .number(Double(partialCount)) }
        return try await post("/sync", .object(body))
    }

    /// Every operation of this user's changelog after `anchor`, following `more`; and the last anchor.
    func catchUp(from anchor: JSONValue, limit: Int = 500) async throws -> (operations: [JSONValue], anchor: JSONValue) {
        var anchor = anchor
        var operations: [JSONValue] = []
        while true {
            let page = try await sync(anchor: anchor, limit: limit)
            operations += page["operations"]?.arrayValue ?? []
            anchor = page["anchor"] ?? anchor
            if page["more"] != .bool(true) { return (operations, anchor) }
        }
    }
}

/// The path of an object from its `layer:///` id: `conversations/<uuid>`.
func path(_ id: String) -> String {
    id.hasPrefix("layer:///") ? String(id.dropFirst("layer:///".count)) : id
}

/// The body that creates a conversation of `users`, named by their identity ids.
func conversationBody(_ users: [String], distinct: Bool, metadata: JSONValue?) -> JSONValue {
    var body: [String: JSONValue] = [
        "participants": .array(users.map { .string(LayerID.identity(userID: $0)) }), "distinct": .bool(distinct),
    ]
    if let metadata { body["metadata"] = metadata }
    return .object(body)
}

/// A message of one text part.
func textMessage(_ text: String) -> [String: JSONValue] {
    ["parts": [["mime_type": "text/plain", "body": .string(text)]]]
}

/// The id of what a request created; throws, failing the test, unless it answered one of `statuses`.
func createdID(_ response: TestResponse, of request: String, statuses: Set<Int> = [201]) throws -> String {
    guard statuses.contains(response.status), let id = response.json?["id"]?.stringValue else {
        throw FixtureError("\(request) answered \(response.status): \(response.text)")
    }
    return id
}
