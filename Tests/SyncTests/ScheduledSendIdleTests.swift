import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

@testable import LayerSync

/// An idle delayed-send worker sleeps: with nothing scheduled there is no next step to wake for.
@Suite("Delayed sends: nothing waits, nothing is polled")
struct ScheduledSendIdleTests {
    @Test("With no delayed send the next step is none (not 'now'); with one, it is when it falls due")
    func nextStepOfAnEmptySchedule() async throws {
        // A database of its own: other tests' delayed sends would be steps too.
        let settings = ServerSettings(database: try await TestDatabase.isolated())
        try await SyncHarness.run(server: settings) { harness in
            let repository = ScheduledMessageRepository(postgres: harness.fixture.server.postgres)
            #expect(try await repository.secondsUntilNextStep(logger: .test) == nil)

            let api = try await harness.server()
            let conversation = try await api.conversation(["alice", "bob"])
            let delayed: JSONValue = [
                "sender": ["name": "Bot"], "parts": [["mime_type": "text/plain", "body": "later"]],
                "schedule": ["delay_in_seconds": 300],
            ]
            let response = try await api.post("/\(path(conversation))/messages", delayed)
            #expect(response.status == 202, "\(response.text)")
            let seconds = try #require(try await repository.secondsUntilNextStep(logger: .test))
            #expect((250...300).contains(seconds), "\(seconds)")
        }
    }
}
