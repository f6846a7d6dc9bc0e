import Foundation
import LayerModels
import LayerTesting
import Synchronization
import Testing

@Suite("Changelog under concurrent writers")
struct ChangelogConcurrencyTests {
    @Test("A reader that keeps syncing while many writers commit sees every change exactly once, in order, without gaps")
    func readerNeverMissesAChange() async throws {
        try await SyncHarness.run { harness in
            let reader = try await harness.user("reader")
            var writers: [UserClient] = []
            for index in 0..<8 { writers.append(try await harness.user("writer\(index)")) }
            // Half the writers talk to the reader alone, half share one group conversation with them.
            let group = try await writers[0].conversation(with: ["reader"] + writers[4...].map(\.id), distinct: false)
            var conversations: [String] = []
            for (index, writer) in writers.enumerated() {
                conversations.append(index < 4 ? try await writer.conversation(with: ["reader"]) : group)
            }
            let start = try await reader.sync(anchor: 0)["anchor"]!
            let perWriter = 25
            let done = Flag()

            let (sent, seen) = try await withThrowingTaskGroup(of: [String].self) { tasks in
                for (writer, conversation) in zip(writers, conversations) {
                    tasks.addTask {
                        var ids: [String] = []
                        for index in 0..<perWriter {
                            ids.append(try await writer.send("\(writer.id) #\(index)", to: conversation)["id"]!.stringValue!)
                        }
                        return ids
                    }
                }
                // The reader syncs from its anchor again and again while the writers commit.
                let readerTask = Task {
                    var anchor = start
                    var seqs: [Int] = []
                    var messages: [String] = []
                    var finalRound = false
                    while true {
                        let page = try await reader.sync(anchor: anchor, limit: 7)
                        for operation in page["operations"]?.arrayValue ?? [] {
                            seqs.append(operation["seq"]?.intValue ?? -1)
                            if operation["type"] == "new_message", let id = operation["message_id"]?.stringValue {
                                messages.append(id)
                            }
                        }
                        anchor = page["anchor"] ?? anchor
                        if page["more"] == true { continue }
                        if finalRound { break }
                        finalRound = done.isSet
                    }
                    return (seqs, messages, anchor)
                }
                var sent: [String] = []
                for try await ids in tasks { sent += ids }
                done.set()
                return (sent, try await readerTask.value)
            }
            let (seqs, messages, finalAnchor) = seen
            #expect(sent.count == 8 * perWriter)
            #expect(messages.count == sent.count, "every acknowledged message reached the reader once")
            #expect(Set(messages) == Set(sent))
            let first = try #require(start.intValue)
            #expect(seqs == Array((first + 1)...(first + seqs.count)), "sequence numbers arrive in order, with no gaps")
            #expect(finalAnchor.intValue == first + seqs.count)
            // The reader's view matches what was committed.
            var committed = 0
            for conversation in Set(conversations) {
                let list = try await reader.get("/\(path(conversation))/messages?page_size=1")
                committed += Int(list.headers.first(name: "Layer-Count") ?? "0") ?? 0
            }
            #expect(committed == sent.count)
        }
    }

    @Test("Two devices answering one message at once leave the higher status")
    func concurrentReceipts() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let phone = try await harness.user("bob")
            let laptop = try await harness.user("bob")
            let conversation = try await alice.conversation(with: ["bob"])
            for round in 0..<10 {
                let message = try await alice.send("m\(round)", to: conversation)["id"]!.stringValue!
                async let read = phone.post("/\(path(message))/receipts", ["type": "read"])
                async let delivered = laptop.post("/\(path(message))/receipts", ["type": "delivery"])
                let statuses = try await [read.status, delivered.status]
                #expect(statuses == [204, 204])
                #expect(try await alice.get("/\(path(message))").json?["recipient_status"]?[phone.identityID] == "read")
            }
        }
    }
}

/// A flag one task raises and another reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
