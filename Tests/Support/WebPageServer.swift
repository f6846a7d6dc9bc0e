import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// A web app's own server, on an origin of its own: it serves the app's pages, and plays its
/// backend (signing identity tokens for its users); the tests' browsers load pages from it that
/// call the suite on another origin.
public enum WebPageServer {
    /// Serves the routes `routes` adds on a free loopback port until `body` returns.
    public static func run<T: Sendable>(
        _ routes: (Router<BasicRequestContext>) -> Void, _ body: @Sendable (_ port: Int) async throws -> T
    ) async throws -> T {
        let router = Router()
        routes(router)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { portContinuation.yield($0.localAddress?.port ?? 0) }, logger: .test)
        let group = ServiceGroup(services: [app], logger: .test)
        let running = Task {
            defer { portContinuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            try await running.value
            throw CancellationError()
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(port))
        } catch {
            result = .failure(error)
        }
        await group.triggerGracefulShutdown()
        _ = await running.result
        return try result.get()
    }
}

/// Headless Chromium from Debian, as the tests drive it: it loads one page and runs until stopped.
public final class HeadlessBrowser: Sendable {
    let process: ChildProcess
    let profile: URL

    /// The browser, or nil when none is installed (`scripts/ensure-deps.sh` installs Debian's).
    public static var executable: String? {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Opens `url` in a new headless browser with a profile of its own.
    public init(opening url: String) throws {
        guard let executable = Self.executable else { throw FixtureError("no Chromium: run scripts/ensure-deps.sh") }
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        process = try ChildProcess(
            executable,
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                "--user-data-dir=\(profile.path)", "--remote-debugging-port=0", url,
            ])
    }

    /// Stops the browser and removes its profile.
    public func close() async {
        process.signal(SIGTERM)
        if (try? await process.wait(timeout: .seconds(5))) == nil {
            process.signal(SIGKILL)
            _ = try? await process.wait(timeout: .seconds(5))
        }
        try? FileManager.default.removeItem(at: profile)
    }

    /// What the browser printed, for a failing test's message.
    public var output: String { process.output }
}
