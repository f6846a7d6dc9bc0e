import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// The page of `Pages/chat.html`, read from the source tree.
private let chatPage: String = {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Pages/chat.html")
    return (try? String(contentsOf: file, encoding: .utf8)) ?? "<p>Pages/chat.html is missing</p>"
}()

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
            router.get("/") { _, _ in
                Response(
                    status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: chatPage)))
            }
            router.get("/identity-token") { request, _ in
                let user = request.uri.queryParameters["user"].map(String.init) ?? ""
                let nonce = request.uri.queryParameters["nonce"].map(String.init) ?? ""
                return try suite.fixture.app.signer.token(userID: user, nonce: nonce)
            }
            router.post("/report") { request, _ in
                let body = try await request.body.collect(upTo: 1 << 20)
                reports.continuation.yield((try? JSONDecoder().decode(JSONValue.self, from: Data(String(buffer: body).utf8))) ?? .null)
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
}
