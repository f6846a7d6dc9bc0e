import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOHTTP1
import Testing

/// CORS through the real edge, each service its own process: the preflights reach the service
/// of each route and come back whole, and an app's own origins, set with `layer admin` in the
/// auth service, reach the other services over the internal API.
@Suite("The edge, for browsers")
struct EdgeCrossOriginTests {
    @Test(
        "Through the edge: preflights of every service, exposed headers, an app's origins set with layer admin, /ping, and a cross-site WebSocket refused"
    )
    func browsersThroughTheEdge() async throws {
        let operatorPage = "https://console.example"
        let appPage = "https://chat.example.com"
        try await EdgeDeployment.run(environment: ["LAYER_CORS_ORIGINS": operatorPage]) { edge in
            func preflight(_ path: String, from origin: String) async throws -> TestResponse {
                try await edge.edge.request(
                    .OPTIONS, path,
                    headers: [
                        ("Origin", origin), ("Access-Control-Request-Method", "POST"),
                        ("Access-Control-Request-Headers", "authorization,content-type,layer-xdk-version"),
                    ], accept: nil)
            }
            for path in ["/nonces", "/conversations", "/persons", "/calls", "/apps/\(UUID())/conversations"] {
                let answer = try await preflight(path, from: operatorPage)
                #expect(answer.status == 204, "\(path): \(answer.status) \(answer.text)")
                #expect(answer.headers.first(name: "Access-Control-Allow-Origin") == operatorPage, "\(path)")
                #expect(answer.headers.first(name: "Access-Control-Allow-Headers")?.contains("layer-xdk-version") == true)
            }
            let nonce = try await edge.edge.request(.POST, "/nonces", headers: [("Origin", operatorPage)])
            #expect(nonce.status == 201)
            #expect(nonce.headers.first(name: "Access-Control-Allow-Origin") == operatorPage)
            #expect(nonce.headers.first(name: "Access-Control-Expose-Headers")?.contains("Layer-Count") == true)
            let ping = try await edge.edge.request(.HEAD, "/ping?client=3.4.6", accept: nil)
            #expect(ping.status == 204)

            // The app's own origin, set in the auth service, is seen by the sync service's process.
            let app = try await edge.registerApp()
            #expect(try await preflight("/conversations", from: appPage).status == 405)
            let set = try await edge.admin(["allow-origins", "--app", app.uri, "--origin", appPage])
            #expect(set.contains(appPage), "\(set)")
            let alice = try await edge.user("alice", app: app)
            var allowed: TestResponse?
            // The sync process reads the lists again within its cache time (5 s) when an origin is new to it.
            for _ in 0..<20 {
                allowed = try await preflight("/conversations", from: appPage)
                if allowed?.status == 204 { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(allowed?.headers.first(name: "Access-Control-Allow-Origin") == appPage)
            let listed = try await edge.edge.request(.GET, "/conversations", headers: alice.auth + [("Origin", appPage)])
            #expect(listed.status == 200)
            #expect(listed.headers.first(name: "Access-Control-Allow-Origin") == appPage)

            // A page of another site cannot ride a stolen session over the WebSocket.
            let refused = try await RawHTTP.exchange(
                port: edge.edgePort,
                RawHTTP.webSocketUpgrade("/websocket?session_token=\(alice.token)", origin: "https://evil.example"),
                tls: try EdgeDeployment.tls())
            #expect(refused.hasPrefix("HTTP/1.1 403"), "\(refused)")
            #expect(refused.contains("\"id\":\"access_denied\""))
            // The allowed page gets its socket, at /websocket and at the root where the SDKs open theirs.
            for path in ["/websocket", "/"] {
                let socket = try await RawHTTP.webSocket(
                    port: edge.edgePort,
                    RawHTTP.webSocketUpgrade("\(path)?session_token=\(alice.token)", origin: appPage, host: "localhost"),
                    tls: try EdgeDeployment.tls(), window: .seconds(1))
                #expect(socket.status == 101, "\(path)")
                #expect(socket.closeCode == nil, "\(path)")
            }
        }
    }
}
