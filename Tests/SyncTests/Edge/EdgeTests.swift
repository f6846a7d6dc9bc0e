import AsyncHTTPClient
import Crypto
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOHTTP1
import NIOSSL
import Testing
import X509

/// The public API driven through the real edge: nginx from Debian's packages with the project's
/// own deploy/nginx/nginx.conf, in front of each service run as its own process (see
/// ``EdgeDeployment``), over TLS.
@Suite("The edge, for real")
struct EdgeTests {
    @Test(
        "Through the edge over TLS: a session, a device certificate and a session bound to it, a certificate of another CA let through to the service, JSON errors, nothing internal, and no token in its log"
    )
    func publicAPIThroughTheEdge() async throws {
        try await EdgeDeployment.run { edge in
            let app = try await edge.registerApp()
            let opened = try await edge.session("alice", app: app)
            #expect(opened.status == 201, "\(opened.text)")
            let token = try #require(opened.json?["session_token"]?.stringValue)
            let alice = UserClient(id: "alice", token: token, client: edge.edge)
            #expect(try await alice.get("/sessions/current").status == 200)

            // The services build URLs on what the client addressed: https and the edge's host,
            // forwarded by the edge, which they trust (no LAYER_PUBLIC_URL is set).
            let conversation = try await alice.conversation(with: ["bob"])
            let fetched = try await alice.get("/\(path(conversation))")
            #expect(fetched.json?["url"]?.stringValue?.hasPrefix("\(edge.edgeURL)/conversations/") == true, "\(fetched.text)")

            // A device certificate from the auth service, and a session bound to it.
            let device = TestDevice()
            let issued = try await edge.edge.request(.POST, "/certificates", json: ["csr": .string(try device.csrPEM())])
            #expect(issued.status == 201, "\(issued.text)")
            let certificate = try #require(issued.json?["certificate"]?.stringValue)
            let bound = try await TestTLS.using(
                try EdgeDeployment.client(certificatePEM: certificate, key: device.key)
            ) { http in
                let certified = TestClient(baseURL: edge.edgeURL, http: http)
                let opened = try await edge.session("alice", app: app, via: certified)
                #expect(opened.status == 201, "\(opened.text)")
                let bound = try #require(opened.json?["session_token"]?.stringValue)
                for route in ["/sessions/current", "/conversations"] {
                    let answer = try await certified.request(.GET, route, headers: AuthFixture.sessionHeader(bound))
                    #expect(answer.status == 200, "\(route) with the certificate: \(answer.text)")
                }
                return bound
            }
            for route in ["/sessions/current", "/conversations"] {
                let stolen = try await edge.edge.request(.GET, route, headers: AuthFixture.sessionHeader(bound))
                #expect(stolen.status == 401, "\(route) without the certificate: \(stolen.text)")
            }

            // A certificate no CA of ours issued does not stop the request at the edge (even
            // POST /certificates, which would give the device a good one); it is not forwarded,
            // so the service sees a connection without one.
            let stranger = TestDevice()
            let foreign = try TestTLS.selfSigned(key: stranger.key, commonName: "stranger", usage: .clientAuth)
            try await TestTLS.using(
                try EdgeDeployment.client(certificatePEM: try foreign.serializeAsPEM().pemString, key: stranger.key)
            ) { http in
                let client = TestClient(baseURL: edge.edgeURL, http: http)
                let certified = try await client.request(.POST, "/certificates", json: ["csr": .string(try stranger.csrPEM())])
                #expect(certified.status == 201, "\(certified.text)")
                let opened = try await edge.session("carol", app: app, via: client)
                #expect(opened.status == 201, "\(opened.text)")
                let unbound = try #require(opened.json?["session_token"]?.stringValue)
                let plain = try await edge.edge.request(.GET, "/sessions/current", headers: AuthFixture.sessionHeader(unbound))
                #expect(plain.status == 200, "a session opened over a foreign certificate is not bound to it")
            }

            // What the edge refuses, it refuses in the API's error shape; the services' own errors
            // pass through as they are.
            let operatorBearer = [("Authorization", "Bearer \(edge.operatorToken)")]
            let internalBearer = [("Authorization", "Bearer \(edge.internalTokens.token(of: "voip"))")]
            for (method, route, headers) in [
                (HTTPMethod.GET, "/nope", [(String, String)]()), (.GET, "/conversationsx", []),
                (.POST, "/internal/v1/introspect", internalBearer), (.GET, "/%69nternal/v1/introspect", internalBearer),
                (.POST, "/admin/apps", operatorBearer), (.GET, "/metrics", []), (.GET, "/health/ready", []),
                (.GET, "/openapi.yaml", []),
            ] {
                let refused = try await edge.edge.request(method, route, headers: headers)
                #expect(refused.status == 404, "\(method) \(route)")
                #expect(refused.errorID == "invalid_endpoint", "\(method) \(route): \(refused.text)")
                #expect(refused.json?["code"] == 106)
                #expect(refused.headers.first(name: "Content-Type")?.hasPrefix("application/json") == true)
            }
            let unknown = try await alice.get("/conversations/\(UUID().lowercased)")
            #expect(unknown.status == 404 && unknown.errorID == "not_found", "\(unknown.text)")

            // Logging out through the edge; no token, in a path or a query string, reaches its log.
            let ended = try await edge.edge.request(.DELETE, "/sessions/\(token)")
            #expect(ended.status == 204)
            _ = try await edge.edge.request(.GET, "/conversations?session_token=\(bound)")
            let log = edge.edgeLog
            #expect(log.contains("\"DELETE /sessions/<token> "), "\(log.suffix(2000))")
            for secret in [token, bound] {
                #expect(!log.contains(secret), "a session token is in the edge's log")
            }
            #expect(!log.contains("session_token"))
        }
    }

    @Test(
        "A WebSocket and an event stream through the edge stay open past nginx's default 60 s read timeout, quiet all along, and still deliver"
    )
    func pushOutlivesTheProxyTimeout() async throws {
        // No pings or keep-alives within the wait: only the edge's own timeouts keep them open.
        try await EdgeDeployment.run(environment: ["LAYER_PUSH_HEARTBEAT": "300", "LAYER_EVENTS_KEEPALIVE": "300"]) { edge in
            let app = try await edge.registerApp()
            let alice = try await edge.user("alice", app: app)
            let bob = try await edge.user("bob", app: app)
            let conversation = try await alice.conversation(with: ["bob"])

            let socket = try await TestWebSocket.connect(
                url: "wss://localhost:\(edge.edgePort)/websocket?session_token=\(bob.token)", tls: try EdgeDeployment.tls())
            try await socket.ready()
            let events = try await TestEventStream.connect(
                url: "\(edge.edgeURL)/events?session_token=\(bob.token)", http: edge.http)
            #expect(events.status == 200)

            try await Task.sleep(for: .seconds(65))
            let sent = try await alice.send("a minute later", to: conversation)
            let id = try #require(sent["id"]?.stringValue)
            let change = try await socket.next(timeout: .seconds(15)) {
                $0["body"]?["operation"] == "create" && $0["body"]?["object"]?["id"]?.stringValue == id
            }
            #expect(change["type"] == "change")
            let event = try await events.next(timeout: .seconds(15)) { $0.event == "new_message" }
            #expect(event.json?["message"]?["id"]?.stringValue == id)
            await socket.close()
            events.close()
            #expect(!edge.edgeLog.contains(bob.token), "the push connections' query strings are not logged")
        }
    }
}
