import LayerModels
import LayerTesting
import NIOHTTP1
import PostgresNIO

/// What several suites of the auth service ask of the fixture.
extension AuthFixture {
    /// The single integer a query answers.
    func count(_ query: PostgresQuery) async throws -> Int {
        let rows = try await server.postgres.query(query, logger: .test)
        for try await value in rows.decode(Int.self) { return value }
        throw FixtureError("no row for \(query.sql)")
    }

    /// `GET /sessions/current` with a session token, over `client` when the connection matters.
    func current(_ session: String, via client: TestClient? = nil, headers: [(String, String)] = []) async throws -> TestResponse
    {
        try await (client ?? self.client).request(
            .GET, "/sessions/current", headers: AuthFixture.sessionHeader(session) + headers)
    }

    /// `GET /sessions/current` with an identity token in place of a session.
    func current(identityToken: String) async throws -> TestResponse {
        try await client.request(
            .GET, "/sessions/current", headers: [("Authorization", "Layer identity-token=\"\(identityToken)\"")])
    }
}
