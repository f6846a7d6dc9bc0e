import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerSync
import LayerTesting
import Testing

/// The auth, sync and names services on one listener (as `layer dev` runs them), with an app of
/// their own; a test signs users in and acts as them, or as the app's backend.
struct NamesHarness: Sendable {
    let fixture: AuthFixture

    /// With `database`, the suite serves from that database (one of its own, for a test that
    /// reads the server's statistics) instead of the one the tests share.
    static func run<T: Sendable>(
        settings: NamesSettings = .testing, withSync: Bool = false, database: DatabaseSettings? = nil,
        _ body: @Sendable (NamesHarness) async throws -> T
    ) async throws -> T {
        let server = database.map { ServerSettings(database: $0, internalToken: Secrets.randomToken()) }
        return try await AuthFixture.run(settings: server, withSync: withSync ? SyncSettings() : nil, withNames: settings) {
            fixture in try await body(NamesHarness(fixture: fixture))
        }
    }

    var client: TestClient { fixture.client }
    var appID: String { fixture.app.id.lowercased }

    /// Signs `name` in and returns a client that acts as them.
    func user(_ name: String) async throws -> NamesClient {
        NamesClient(prefix: "", headers: AuthFixture.sessionHeader(try await fixture.session(user: name)), client: client)
    }

    /// The app's backend, with a fresh Server API token.
    func server() async throws -> NamesClient {
        NamesClient(
            prefix: "/apps/\(appID)", headers: [("Authorization", "Bearer \(try await fixture.serverAPIToken())")], client: client
        )
    }
}

extension NamesSettings {
    /// The defaults, with budgets per user that no test but the rate limits' own spends.
    static let testing = NamesSettings(resolveRate: 1000, writeRate: 1000)
}

/// Requests to the names routes as a user (paths as they are) or as the app's backend (under
/// `/apps/<app>`).
struct NamesClient: Sendable {
    let prefix: String
    let headers: [(String, String)]
    let client: TestClient

    func get(_ path: String) async throws -> TestResponse {
        try await client.request(.GET, prefix + path, headers: headers)
    }

    func post(_ path: String, _ json: JSONValue) async throws -> TestResponse {
        try await client.request(.POST, prefix + path, headers: headers, json: json)
    }

    func patch(_ path: String, _ json: JSONValue) async throws -> TestResponse {
        try await client.request(.PATCH, prefix + path, headers: headers, json: json)
    }

    func delete(_ path: String) async throws -> TestResponse {
        try await client.request(.DELETE, prefix + path, headers: headers)
    }

    /// `POST /persons`; the body of its 201 (fails the test otherwise).
    func add(_ persons: [JSONValue]) async throws -> JSONValue {
        let response = try await post("/persons", ["persons": .array(persons)])
        guard response.status == 201, let json = response.json else {
            throw FixtureError("POST /persons answered \(response.status): \(response.text)")
        }
        return json
    }

    /// Adds one record; the id of the person it became.
    func addOne(_ person: JSONValue) async throws -> String {
        try #require(try await add([person])["persons"]?[0]?["id"]?.stringValue)
    }

    /// `GET /resolve`: the status, the person id and the confidence.
    func resolve(_ address: String, known: String? = nil) async throws -> (status: Int, person: String?, confidence: Double?) {
        var path = "/resolve?address=" + address.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
        if let known { path += "&known=" + known.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)! }
        let response = try await get(path)
        return (response.status, response.json?["person_id"]?.stringValue, response.json?["confidence"]?.numberValue)
    }
}

/// A person record of the API.
func person(
    _ first: String?, _ last: String?, _ addresses: [(String, String)] = [], verified: Bool = false, birthday: String? = nil,
    location: String? = nil, verifiedAddresses: [(String, String)] = []
) -> JSONValue {
    var object: [String: JSONValue] = [
        "addresses": .array(
            addresses.map { ["type": .string($0.0), "value": .string($0.1), "verified": .bool(verified)] }
                + verifiedAddresses.map { ["type": .string($0.0), "value": .string($0.1), "verified": true] })
    ]
    if let first { object["first_name"] = .string(first) }
    if let last { object["last_name"] = .string(last) }
    if let birthday { object["birthday"] = .string(birthday) }
    if let location { object["location"] = .string(location) }
    return .object(object)
}

/// The path of an object from its `layer:///` id.
func path(_ id: String) -> String {
    id.hasPrefix("layer:///") ? String(id.dropFirst("layer:///".count)) : id
}
