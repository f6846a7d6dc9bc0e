import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// A page of `Pages/`, read from the source tree.
private func page(_ name: String) -> String {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Pages/\(name)")
    return (try? String(contentsOf: file, encoding: .utf8)) ?? "<p>Pages/\(name) is missing</p>"
}

/// A build of the original Web XDK to run (`LAYER_XDK_BUILD`, a file such as the XDK
/// repository's test/coverage-build.js); none is in this repository, whose license is not the XDK's.
private let xdkBuild = ProcessInfo.processInfo.environment["LAYER_XDK_BUILD"]

/// Reports the page sends back, one per page load.
private final class Reports: Sendable {
    let (stream, continuation) = AsyncStream.makeStream(of: JSONValue.self)

    /// Loads `url` in a new headless browser and returns the report of its page.
    func load(_ url: String) async throws -> JSONValue {
        let browser = try HeadlessBrowser(opening: url)
        do {
            let report = try await next()
            await browser.close()
            return report
        } catch {
            await browser.close()
            throw FixtureError("no report from \(url): \(error); the browser said: \(browser.output.suffix(2000))")
        }
    }

    /// The next report, or a failure once `timeout` has passed.
    func next(timeout: Duration = .seconds(60)) async throws -> JSONValue {
        try await withDeadline(timeout) { [stream] in
            var iterator = stream.makeAsyncIterator()
            guard let report = await iterator.next() else { throw FixtureError("the page server stopped") }
            return report
        }
    }
}

@Suite("A real browser: a web app on its own origin")
struct BrowserTests {
    /// The web app's own server: its page, its backend's token signing, and the reports.
    private static func pageRoutes(_ suite: SyncHarness, reports: Reports) -> (Router<BasicRequestContext>) -> Void {
        { router in
            func serve(_ path: RouterPath, _ type: String, _ text: @escaping @Sendable () -> String) {
                router.get(path) { _, _ in
                    Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text())))
                }
            }
            serve("/", "text/html; charset=utf-8") { page("chat.html") }
            serve("/xdk.html", "text/html; charset=utf-8") { page("xdk.html") }
            serve("/xdk.js", "text/javascript") { xdkBuild.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? "" }
            router.get("/identity-token") { request, _ in
                let user = request.uri.queryParameters["user"].map(String.init) ?? ""
                let nonce = request.uri.queryParameters["nonce"].map(String.init) ?? ""
                return try suite.fixture.app.signer.token(userID: user, nonce: nonce)
            }
            router.post("/report") { request, _ in
                let body = try await request.body.collect(upTo: 1 << 20)
                reports.continuation.yield(
                    (try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: body).utf8))) ?? .null)
                return HTTPResponse.Status.noContent
            }
        }
    }

    @Test(
        "Headless Chromium on the app's origin signs in, sends and receives live; a page on another origin is kept out",
        .enabled(if: HeadlessBrowser.executable != nil, "needs Chromium (scripts/ensure-deps.sh installs it)"))
    func webAppOnItsOwnOrigin() async throws {
        // No operator-wide origin: the app itself allows its page's origin.
        try await SyncHarness.run(settings: quickPush) { suite in
            let reports = Reports()
            try await WebPageServer.run(Self.pageRoutes(suite, reports: reports)) { port in
                let page = "http://127.0.0.1:\(port)"
                let allowed = try await suite.allowOrigins([page])
                #expect(allowed.status == 200)
                let query = "suite=\(suite.fixture.server.baseURL)&app=\(suite.fixture.app.uri)"

                let report = try await reports.load("\(page)/?\(query)")
                #expect(report["error"] == nil, "\(report)")
                #expect(report["origin"]?.stringValue == page)
                #expect(report["sessionUserHeader"]?.stringValue == "bob")
                #expect(report["conversationStatus"]?.intValue == 201)
                #expect(report["sendStatus"]?.intValue == 201)
                #expect(report["received"]?.stringValue == "Hello from \(page)")
                #expect(report["listStatus"]?.intValue == 200)
                #expect(report["layerCount"]?.stringValue == "1")
                #expect(report["requestID"]?.stringValue?.isEmpty == false)
                #expect(report["challengeStatus"]?.intValue == 401)
                #expect(report["challengeNonce"]?.boolValue == true)
                #expect(report["challengeHeader"]?.stringValue?.hasPrefix("Layer realm=") == true)

                // The same page from an origin nobody allows: the browser withholds the answers,
                // and the WebSocket upgrade is refused even with a stolen token.
                let carol = try await suite.user("carol")
                let elsewhere = "http://localhost:\(port)/?\(query)&mode=blocked&token=\(carol.token)"
                let blocked = try await reports.load(elsewhere)
                #expect(blocked["origin"]?.stringValue == "http://localhost:\(port)")
                #expect(blocked["ownServer"]?.intValue == 200)
                #expect(blocked["fetchBlocked"]?.boolValue == true)
                #expect(blocked["socketOpened"]?.boolValue == false)
            }
        }
    }

    @Test(
        "The original Web XDK, unmodified, on the app's origin: signs in, sends, and hears the answer over its WebSocket",
        .enabled(if: HeadlessBrowser.executable != nil && xdkBuild != nil, "set LAYER_XDK_BUILD to a build of the Web XDK"))
    func originalWebXDK() async throws {
        var server = ServerSettings()
        server.allowedOrigins = [OriginRule].parsing(["http://127.0.0.1:*"]).rules
        try await SyncHarness.run(settings: quickPush, server: server) { suite in
            let reports = Reports()
            try await WebPageServer.run(Self.pageRoutes(suite, reports: reports)) { port in
                let report = try await reports.load(
                    "http://127.0.0.1:\(port)/xdk.html?suite=\(suite.fixture.server.baseURL)&app=\(suite.fixture.app.uri)")
                #expect(report["done"]?.boolValue == true, "\(report)")
                #expect(report["bobHeard"]?.stringValue == "Hello from the XDK on http://127.0.0.1:\(port)")
                #expect(report["aliceHeard"]?.stringValue == "Hi Alice, from Bob")
            }
        }
    }
}
