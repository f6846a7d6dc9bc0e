import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerTesting
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle
import Synchronization
import Testing

/// What the host does for every service, in order: one id per request from the outermost layer
/// in, and background work that starts only once the schema it works on is there.
@Suite struct HostOrderTests {
    /// A route that logs, then works past any deadline; and a worker that reads its table as soon
    /// as it starts, recording what it found.
    final class SlowService: LayerService {
        let name = "slow"
        static let migrations = MigrationRunner(
            schema: "slow",
            migrations: [
                // Slow enough that work started beside the migrations would be there first.
                Migration(1, "jobs", ["SELECT pg_sleep(1)", "CREATE TABLE slow.jobs (id int)"])
            ])
        var migrations: MigrationRunner { Self.migrations }
        let openAPI = ""
        let workerSaw = Mutex<String?>(nil)
        let postgres: PostgresClient

        init(postgres: PostgresClient) { self.postgres = postgres }

        /// Built by the host, on its pool; `built` keeps what it built for the test to look at.
        static func plan(_ built: Built) -> ServicePlan {
            ServicePlan(name: "slow", migrations: migrations) { dependencies in
                let service = SlowService(postgres: dependencies.postgres)
                built.service.withLock { $0 = service }
                return service
            }
        }

        func addRoutes(to router: LimitedRoutes) {
            router.get("slow") { _, context -> Response in
                context.logger.info("slow work started")
                try await Task.sleep(for: .seconds(30))
                return Response(status: .noContent)
            }
            // A group of its own: bodies of at most 1 KiB.
            router.with(RequestLimits(largestBody: 1024, deadline: .seconds(10))).post("small") { request, _ in
                "\(try await request.body.collect(upTo: .max).readableBytes)"
            }
            // A group that reads its body as it arrives and bounds its own work.
            router.with(.streaming).group("streamed").post { request, _ -> String in
                var bytes = 0
                for try await part in request.body { bytes += part.readableBytes }
                try await Task.sleep(for: .milliseconds(1500))
                return "\(bytes)"
            }
        }

        var backgroundServices: [any Service] { [Worker(service: self)] }

        struct Worker: Service {
            let service: SlowService
            func run() async throws {
                do {
                    _ = try await service.postgres.query("SELECT count(*) FROM slow.jobs", logger: .test).collect()
                    service.workerSaw.withLock { $0 = "the table" }
                } catch {
                    service.workerSaw.withLock { $0 = "\(String(reflecting: error))" }
                }
                // Done; the host keeps running until the test ends.
                try? await Task.sleep(for: .seconds(3600))
            }
        }
    }

    final class Built: Sendable {
        let service = Mutex<SlowService?>(nil)
    }

    @Test func aDeadline503NamesTheRequestIdOfTheLogsOfTheWorkItCutOff() async throws {
        var settings = ServerSettings(internalTokens: .random())
        settings.database = try await TestDatabase.settings()
        settings.requestTimeout = .seconds(1)
        let capture = LogCapture()
        let built = Built()
        try await LiveServer.run([SlowService.plan(built)], settings: settings, logger: capture.logger(level: .info)) { server in
            let client = TestClient(baseURL: server.baseURL, http: server.http)
            for given in [nil, "caller-7.a_b"] {
                let headers = given.map { [("X-Request-Id", $0)] } ?? []
                let response = try await client.request(.GET, "/slow", headers: headers)
                #expect(response.status == 503)
                let id = try #require(response.headers.first(name: "X-Request-Id"))
                if let given { #expect(id == given) }
                let lines = capture.text.split(separator: "\n")
                let work = lines.filter { $0.contains("slow work started") && $0.contains(id) }
                let deadline = lines.filter { $0.contains("Request deadline passed") && $0.contains(id) }
                #expect(work.count == 1, "the route's own log line carries the id of the 503")
                #expect(deadline.count == 1, "the deadline's log line carries the id of the 503")
            }
        }
    }

    @Test func eachRouteGroupReadsBodiesAndAnswersWithinItsOwnLimits() async throws {
        var settings = ServerSettings(internalTokens: .random())
        settings.database = try await TestDatabase.settings()
        settings.requestTimeout = .seconds(1)
        try await LiveServer.run([SlowService.plan(Built())], settings: settings) { server in
            let client = TestClient(baseURL: server.baseURL, http: server.http)
            let small = try await client.request(
                .POST, "/small", body: ByteBuffer(repeating: 0, count: 1024), contentType: "text/plain")
            #expect(small.status == 200)
            #expect(small.text == "1024")
            let large = try await client.request(
                .POST, "/small", body: ByteBuffer(repeating: 0, count: 1025), contentType: "text/plain")
            #expect(large.status == 413)
            #expect(large.errorID == "request_too_large")
            // Past the usual 4 MB and the 1 s deadline of every other route.
            let streamed = try await client.request(
                .POST, "/streamed", body: ByteBuffer(repeating: 0, count: 5 * 1024 * 1024),
                contentType: "application/octet-stream")
            #expect(streamed.status == 200)
            #expect(streamed.text == "\(5 * 1024 * 1024)")
            let unrouted = try await client.request(
                .POST, "/nowhere", body: ByteBuffer(repeating: 0, count: 5 * 1024 * 1024), contentType: "text/plain")
            #expect(unrouted.status == 404)
        }
    }

    @Test func backgroundServicesStartOnceTheMigrationsAreApplied() async throws {
        var settings = ServerSettings(internalTokens: .random())
        settings.database = try await TestDatabase.settings()
        let built = Built()
        try await LiveServer.run([SlowService.plan(built)], settings: settings) { _ in
            let service = try #require(built.service.withLock { $0 })
            // The worker runs at once and stops; give it a moment when the machine is slow.
            for _ in 0..<100 where service.workerSaw.withLock({ $0 }) == nil {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(service.workerSaw.withLock { $0 } == "the table")
        }
    }
}
