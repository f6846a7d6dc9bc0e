import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import NIOHTTP1
import Testing

/// Where the tests' browsers are: a page the operator allows, one no list allows, and one a
/// test's app allows (each test its own: the tests' apps share a database, and a preflight asks
/// every app).
private let localPage = "http://localhost:5173"
private let strangerPage = "https://evil.example"
private func freshAppPage() -> String { "https://chat-\(UUID().uuidString.prefix(8).lowercased()).example.com" }

/// The suite as `layer dev` serves it, with the operator's list of `layer dev`.
private func run<T: Sendable>(_ body: @Sendable (SyncHarness) async throws -> T) async throws -> T {
    var server = ServerSettings()
    server.allowedOrigins =
        [OriginRule]
        .parsing(["http://localhost:*", "http://127.0.0.1:*"]).rules
    return try await SyncHarness.run(settings: quickPush, server: server, body)
}

extension TestResponse {
    func header(_ name: String) -> String? { headers.first(name: name) }
    var allowedOrigin: String? { header("Access-Control-Allow-Origin") }
}

extension SyncHarness {
    /// A preflight as a browser sends it before `method` with `headers` from `origin`.
    func preflight(
        _ path: String, from origin: String, method: String = "POST",
        headers: String = "accept,authorization,content-type"
    ) async throws -> TestResponse {
        try await client.request(
            .OPTIONS, path,
            headers: [
                ("Origin", origin), ("Access-Control-Request-Method", method),
                ("Access-Control-Request-Headers", headers),
            ], accept: nil)
    }

    /// Sets the allowed origins of the harness's app through the operator API.
    func allowOrigins(_ origins: [String], app: UUID? = nil) async throws -> TestResponse {
        try await client.request(
            .PATCH, "/admin/apps/\((app ?? fixture.app.id).lowercased)", headers: fixture.operatorHeaders,
            json: ["allowed_origins": .array(origins.map(JSONValue.string))])
    }
}

@Suite("CORS: web apps on their own origin")
struct CrossOriginTests {
    @Test("A preflight from an allowed origin is answered 204 with the origin, methods, headers and max age, on any route")
    func preflightFromAnAllowedOrigin() async throws {
        try await run { suite in
            for path in ["/nonces", "/sessions", "/conversations/\(UUID().uuidString)/messages", "/no/such/route"] {
                let response = try await suite.preflight(
                    path, from: localPage,
                    headers: "Accept, Authorization, Content-Type, If-None-Match, X-HTTP-Method-Override, "
                        + "layer-xdk-version, client-id, Upload-Content-Type, Layer-Anything, X-Request-Id")
                #expect(response.status == 204, "\(path)")
                #expect(response.allowedOrigin == localPage)
                #expect(response.header("Access-Control-Allow-Credentials") == "true")
                let methods = Set(
                    response.header("Access-Control-Allow-Methods")?.split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces)
                    } ?? [])
                #expect(methods.isSuperset(of: ["GET", "POST", "PUT", "PATCH", "DELETE"]))
                let allowed = Set(
                    response.header("Access-Control-Allow-Headers")?.lowercased().split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces)
                    } ?? [])
                #expect(
                    allowed.isSuperset(of: [
                        "accept", "authorization", "content-type", "if-none-match", "x-http-method-override",
                        "layer-xdk-version", "client-id", "upload-content-type", "layer-anything", "x-request-id",
                    ]))
                #expect(Int(response.header("Access-Control-Max-Age") ?? "") ?? 0 > 0)
                #expect(response.header("Vary")?.contains("Origin") == true)
            }
            // A header outside the allowed ones is not granted, so the browser does not send it.
            let odd = try await suite.preflight("/nonces", from: localPage, headers: "x-something-else")
            #expect(odd.header("Access-Control-Allow-Headers")?.lowercased().contains("x-something-else") == false)
        }
    }

    @Test("A preflight from an origin nobody allows gets no CORS headers and the usual answer")
    func preflightFromAStranger() async throws {
        try await run { suite in
            let response = try await suite.preflight("/nonces", from: strangerPage)
            #expect(response.status == 405)
            #expect(response.errorID == "method_not_allowed")
            #expect(response.allowedOrigin == nil)
            #expect(response.header("Access-Control-Allow-Credentials") == nil)
            // Nor does one of the page's own origin on another port than the rule's.
            let https = try await suite.preflight("/nonces", from: "https://localhost:5173")
            #expect(https.allowedOrigin == nil)
        }
    }

    @Test("Answers to an allowed origin expose the API's headers, errors included; others get none and the same answer")
    func realResponses() async throws {
        try await run { suite in
            let nonce = try await suite.client.request(.POST, "/nonces", headers: [("Origin", localPage)])
            #expect(nonce.status == 201)
            #expect(nonce.allowedOrigin == localPage)
            #expect(nonce.header("Access-Control-Allow-Credentials") == "true")
            let exposed = Set(
                nonce.header("Access-Control-Expose-Headers")?.lowercased().split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces)
                } ?? [])
            #expect(
                exposed.isSuperset(of: [
                    "layer-count", "link", "location", "www-authenticate", "x-request-id", "retry-after",
                ]))
            // The 401 challenge is readable: the page needs its nonce and WWW-Authenticate.
            let challenge = try await suite.client.request(.GET, "/conversations", headers: [("Origin", localPage)])
            #expect(challenge.status == 401)
            #expect(challenge.allowedOrigin == localPage)
            #expect(challenge.json?["data"]?["nonce"]?.stringValue != nil)
            // A stranger's request is answered as usual, without the headers that would let its page read it.
            let stranger = try await suite.client.request(.POST, "/nonces", headers: [("Origin", strangerPage)])
            #expect(stranger.status == 201)
            #expect(stranger.allowedOrigin == nil)
            #expect(stranger.header("Vary")?.contains("Origin") == true)
            // A request with no Origin (curl, a backend) carries none.
            let plain = try await suite.client.request(.POST, "/nonces")
            #expect(plain.allowedOrigin == nil)
        }
    }

    @Test("An app's allowed origins apply at once to its own requests, not to another app's")
    func appOrigins() async throws {
        let appPage = freshAppPage()
        try await run { suite in
            #expect(try await suite.preflight("/conversations", from: appPage).allowedOrigin == nil)
            let set = try await suite.allowOrigins([appPage, "https://*.example.org"])
            #expect(set.status == 200)
            #expect(set.json?["allowed_origins"] == [.string(appPage), "https://*.example.org"])
            let shown = try await suite.client.request(
                .GET, "/admin/apps/\(suite.fixture.app.id.lowercased)", headers: suite.fixture.operatorHeaders)
            #expect(shown.json?["allowed_origins"]?.arrayValue?.count == 2)

            // Before the app is known (a preflight, a nonce), any app's origin counts.
            #expect(try await suite.preflight("/conversations", from: appPage).allowedOrigin == appPage)
            #expect(try await suite.preflight("/nonces", from: "https://web.example.org").status == 204)
            let alice = try await suite.user("alice")
            let own = try await suite.client.request(.GET, "/conversations", headers: alice.auth + [("Origin", appPage)])
            #expect(own.status == 200)
            #expect(own.allowedOrigin == appPage)

            // Another app's session from that page: answered, but not readable by the page.
            let other = try await suite.fixture.registerApp(keyIndex: 1)
            let token = try await suite.fixture.identityToken(user: "mallory", app: other)
            let session = try await suite.fixture.createSession(token: token, app: other)
            let otherToken = try #require(session.json?["session_token"]?.stringValue)
            let foreign = try await suite.client.request(
                .GET, "/conversations", headers: AuthFixture.sessionHeader(otherToken) + [("Origin", appPage)])
            #expect(foreign.status == 200)
            #expect(foreign.allowedOrigin == nil)

            // Cleared: the page is a stranger again.
            #expect(try await suite.allowOrigins([]).status == 200)
            #expect(try await suite.preflight("/conversations", from: appPage).allowedOrigin == nil)
            let after = try await suite.client.request(.GET, "/conversations", headers: alice.auth + [("Origin", appPage)])
            #expect(after.allowedOrigin == nil)
        }
    }

    @Test("allowed_origins takes origins only, names the bad entry and changes nothing")
    func invalidOrigins() async throws {
        let appPage = freshAppPage()
        try await run { suite in
            #expect(try await suite.allowOrigins([appPage]).status == 200)
            for bad in [
                "https://chat.example.com/app", "https://a.example:99999", "chat.example.com", "https://", "https://exa mple.com",
                "",
            ] {
                let response = try await suite.allowOrigins(["https://ok.example", bad])
                #expect(response.status == 422, "\(bad)")
                #expect(response.errorProperty == "allowed_origins.1", "\(bad)")
            }
            let tooMany = try await suite.allowOrigins((0...OriginRule.maxPerApp).map { "https://a\($0).example" })
            #expect(tooMany.status == 422)
            #expect(tooMany.errorProperty == "allowed_origins")
            let created = try await suite.client.request(
                .POST, "/admin/apps", headers: suite.fixture.operatorHeaders,
                json: ["name": "web", "allowed_origins": ["https://web.example", "http://localhost:*", "not an origin"]])
            #expect(created.status == 422)
            #expect(created.errorProperty == "allowed_origins.2")
            let shown = try await suite.client.request(
                .GET, "/admin/apps/\(suite.fixture.app.id.lowercased)", headers: suite.fixture.operatorHeaders)
            #expect(shown.json?["allowed_origins"] == [.string(appPage)])
        }
    }

    @Test("The app's backend sets its origins with the Server API's PATCH of the app")
    func serverAPIOrigins() async throws {
        let appPage = freshAppPage()
        try await run { suite in
            let server = try await suite.server()
            let set = try await server.patch(
                "", [["operation": "set", "property": "allowed_origins", "value": [.string(appPage)]]])
            #expect(set.status == 202)
            #expect(try await suite.preflight("/conversations", from: appPage).allowedOrigin == appPage)
            let bad = try await server.patch("", [["operation": "set", "property": "allowed_origins", "value": ["x"]]])
            #expect(bad.status == 422)
            #expect(bad.errorProperty == "allowed_origins.0")
        }
    }

    @Test("A WebSocket from a page nobody allows is refused with 403, one another app allows is closed with 4403")
    func webSocketOrigins() async throws {
        let appPage = freshAppPage()
        try await run { suite in
            let alice = try await suite.user("alice")
            func upgrade(_ origin: String, host: String = "127.0.0.1") -> String {
                RawHTTP.webSocketUpgrade("/websocket?session_token=\(alice.token)", origin: origin, host: host)
            }
            // Refused before any upgrade, with the API's JSON 403.
            let refused = try await RawHTTP.exchange(port: suite.fixture.server.port, upgrade(strangerPage))
            #expect(refused.hasPrefix("HTTP/1.1 403"), "\(refused)")
            #expect(refused.contains("\"id\":\"access_denied\""))
            #expect(refused.contains("\"header\":\"Origin\""))

            // An origin of another app: the upgrade is taken, and the socket closed at once.
            let other = try await suite.fixture.registerApp(keyIndex: 1)
            #expect(try await suite.allowOrigins([appPage], app: other.id).status == 200)
            let foreign = try await RawHTTP.webSocket(port: suite.fixture.server.port, upgrade(appPage))
            #expect(foreign.status == 101)
            #expect(foreign.closeCode == 4403)

            // The allowed page, a page of the suite's own origin, an app's web view and a client
            // that sends no Origin connect, and stay.
            let ownHost = "api.example.test:\(suite.fixture.server.port)"
            for (origin, host) in [
                (localPage, "127.0.0.1"), ("http://\(ownHost)", ownHost), ("capacitor://localhost", "127.0.0.1"),
            ] {
                let page = try await RawHTTP.webSocket(
                    port: suite.fixture.server.port, upgrade(origin, host: host), window: .seconds(1))
                #expect(page.status == 101, "\(origin)")
                #expect(page.closeCode == nil, "\(origin)")
            }
            let native = try await suite.socket(alice)
            await native.close()
        }
    }

    @Test("An event stream from a page nobody allows is refused with 403; an allowed page reads it")
    func eventStreamOrigins() async throws {
        try await run { suite in
            let alice = try await suite.user("alice")
            let path = "/events?session_token=\(alice.token)"
            let refused = try await suite.client.request(.GET, path, headers: [("Origin", strangerPage)], accept: nil)
            #expect(refused.status == 403)
            #expect(refused.errorID == "access_denied")
            let stream = try await suite.events(alice, headers: ["Origin": localPage])
            #expect(stream.status == 200)
            #expect(stream.headers.first { $0.0.lowercased() == "access-control-allow-origin" }?.1 == localPage)
        }
    }

    @Test("Signed upload and download URLs answer the page of the upload's Upload-Origin, preflight included")
    func uploadOrigin() async throws {
        try await run { suite in
            let alice = try await suite.user("alice")
            let uploader = "https://uploads.example.net"
            let bytes = ByteBuffer(repeating: 7, count: 3000)
            let slot = try await alice.client.request(
                .POST, "/content",
                headers: alice.auth + [
                    ("Upload-Content-Type", "application/octet-stream"), ("Upload-Content-Length", "3000"),
                    ("Upload-Origin", uploader),
                ])
            #expect(slot.status == 201)
            let uploadURL = try #require(slot.json?["upload_url"]?.stringValue)
            let uploadPath = String(uploadURL.dropFirst(suite.fixture.server.baseURL.count))

            let preflight = try await suite.preflight(
                uploadPath, from: uploader, method: "PUT", headers: "upload-content-type, upload-content-length")
            #expect(preflight.status == 204)
            #expect(preflight.allowedOrigin == uploader)
            #expect(try await suite.preflight(uploadPath, from: strangerPage, method: "PUT").allowedOrigin == nil)

            let uploaded = try await suite.client.request(
                .PUT, uploadPath, headers: [("Origin", uploader)], body: bytes, contentType: "application/octet-stream")
            #expect(uploaded.status == 200)
            #expect(uploaded.allowedOrigin == uploader)
            let downloadURL = try #require(uploaded.json?["download_url"]?.stringValue)
            let downloadPath = String(downloadURL.dropFirst(suite.fixture.server.baseURL.count))
            let download = try await suite.client.request(.GET, downloadPath, headers: [("Origin", uploader)], accept: nil)
            #expect(download.status == 200)
            #expect(download.allowedOrigin == uploader)
            #expect(download.body == bytes)
            let stranger = try await suite.client.request(.GET, downloadPath, headers: [("Origin", strangerPage)], accept: nil)
            #expect(stranger.allowedOrigin == nil)

            // Only one origin, written as a browser writes it.
            let wildcard = try await alice.client.request(
                .POST, "/content",
                headers: alice.auth + [
                    ("Upload-Content-Type", "text/plain"), ("Upload-Content-Length", "10"),
                    ("Upload-Origin", "https://*.example.net"),
                ])
            #expect(wildcard.status == 422)
            #expect(wildcard.errorProperty == "Upload-Origin")
        }
    }

    @Test("HEAD and GET /ping answer 204 with any query and no session; the XDK's socket check needs one")
    func pingAndSocketCheck() async throws {
        try await run { suite in
            for method in [HTTPMethod.HEAD, .GET] {
                let ping = try await suite.client.request(method, "/ping?client=3.4.6", accept: nil)
                #expect(ping.status == 204)
            }
            #expect(
                try await suite.client.request(.GET, "/ping?x=1&y", headers: [("Origin", localPage)]).allowedOrigin == localPage)
            let check = "/?action=validateConnectionForWebsocket&client=1.0.0"
            let anonymous = try await suite.client.request(.GET, check)
            #expect(anonymous.status == 401)
            #expect(anonymous.json?["data"]?["nonce"]?.stringValue != nil)
            let alice = try await suite.user("alice")
            let valid = try await suite.client.request(.GET, check, headers: alice.auth)
            #expect(valid.status == 200)
            #expect(try await suite.client.request(.GET, "/").status == 200)
        }
    }
}
