import LayerTesting
import Testing

@testable import LayerServer

/// What the host decides for the services it serves together.
@Suite struct HostTests {
    @Test func webSocketsOfSeveralServicesTakeTheLargestFrameAndTheMostFrequentHeartbeat() {
        #expect(WebSocketLimits.merging([]) == nil)
        let merged = WebSocketLimits.merging([
            WebSocketLimits(maxFrameSize: 1024, heartbeat: .seconds(30)),
            WebSocketLimits(maxFrameSize: 256 * 1024, heartbeat: nil),
            WebSocketLimits(maxFrameSize: 4096, heartbeat: .seconds(10)),
        ])
        #expect(merged?.maxFrameSize == 256 * 1024)
        #expect(merged?.heartbeat == .seconds(10))
        #expect(WebSocketLimits.merging([WebSocketLimits(maxFrameSize: 1, heartbeat: nil)])?.heartbeat == nil)
    }

    @Test func aPeerHostedInTheSameProcessIsCalledOnItsListenerOnceItIsBound() {
        // A pool that is never run: nothing here talks to a database.
        let database = DatabaseSettings(host: "127.0.0.1", port: 1, username: "unused", password: nil, database: "unused")
        let listener = LateBoundURL()
        let dependencies = ServiceDependencies(
            server: ServerSettings(), postgres: database.makeClient(logger: .test), hosted: ["auth"],
            listener: listener)
        let hosted = dependencies.peerURL("auth", configured: "http://auth.example:8081")
        let remote = dependencies.peerURL("names", configured: "http://names.example:8083")
        listener.set("http://127.0.0.1:41234")
        #expect(hosted() == "http://127.0.0.1:41234")
        #expect(remote() == "http://names.example:8083")
    }
}
