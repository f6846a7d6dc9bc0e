import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerTesting
import Logging
import Synchronization
import Testing

/// The internal HTTP client against a real server that fails on purpose.
@Suite struct InternalClientTests {
    /// Answers 503 to the first `failures` calls of each path, then echoes its JSON body.
    final class FlakyService: LayerService {
        let name = "flaky"
        let migrations = MigrationRunner(schema: "flaky", migrations: [])
        let openAPI = ""
        let failures: Int
        let calls = Mutex<[String: Int]>([:])

        init(failures: Int) { self.failures = failures }

        func addRoutes(to router: LimitedRoutes) {
            router.post("internal/v1/:kind") { request, context in
                let kind = context.parameters.get("kind") ?? ""
                let count = self.calls.withLock { calls in
                    calls[kind, default: 0] += 1
                    return calls[kind]!
                }
                if kind == "refuse" { throw APIError.invalid("thing", "No thing like that.") }
                if count <= self.failures { return Response(status: .serviceUnavailable) }
                return try Response.json(try await request.decodeJSON(JSONValue.self))
            }
        }
    }

    func withFlaky(failures: Int, _ body: @Sendable (InternalClient, FlakyService) async throws -> Void) async throws {
        let service = FlakyService(failures: failures)
        try await LiveServer.run([ServicePlan(service)]) { server in
            try await body(InternalClient(baseURL: server.baseURL, token: "t", http: server.http, attempts: 3), service)
        }
    }

    @Test func idempotentCallsAreRetriedThroughPassingFailures() async throws {
        try await withFlaky(failures: 2) { client, service in
            let answer = try await client.post(
                "/internal/v1/read", body: ["x": 1] as JSONValue, as: JSONValue.self, idempotent: true, logger: .test)
            #expect(answer == ["x": 1])
            #expect(service.calls.withLock { $0["read"] } == 3)
        }
    }

    @Test func otherCallsAreNotRetried() async throws {
        try await withFlaky(failures: 1) { client, service in
            await #expect(throws: APIError.self) {
                _ = try await client.post(
                    "/internal/v1/write", body: ["x": 1] as JSONValue, as: JSONValue.self, idempotent: false, logger: .test)
            }
            #expect(service.calls.withLock { $0["write"] } == 1)
        }
    }

    @Test func aClientErrorOfTheOtherServiceComesThroughAsIs() async throws {
        try await withFlaky(failures: 0) { client, _ in
            do {
                _ = try await client.post(
                    "/internal/v1/refuse", body: [:] as JSONValue, as: JSONValue.self, idempotent: true, logger: .test)
                Issue.record("the call should fail")
            } catch let error as APIError {
                #expect(error.body.id == "invalid_property")
                #expect(error.body.data?["property"] == "thing")
            }
        }
    }

    @Test func anUnreachableServiceIs503AfterTheRetries() async throws {
        let client = InternalClient(
            baseURL: "http://127.0.0.1:9", token: "t", http: .shared, timeout: .milliseconds(500), attempts: 2)
        do {
            _ = try await client.post(
                "/internal/v1/x", body: [:] as JSONValue, as: JSONValue.self, idempotent: true, logger: .test)
            Issue.record("the call should fail")
        } catch let error as APIError {
            #expect(error.body.id == "service_unavailable")
        }
    }
}
