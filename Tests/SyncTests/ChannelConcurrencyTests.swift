import Foundation
import LayerModels
import LayerTesting
import Testing

@Suite("Channels under concurrent requests")
struct ChannelConcurrencyTests {
    @Test("Of several users racing for a channel's last seat, exactly one gets it")
    func lastSeat() async throws {
        try await SyncHarness.run { harness in
            let owner = try await harness.user("owner")
            // The owner and 248 others: one seat left.
            let channel = try await owner.channel("almost full", members: (1...248).map { "member\($0)" })
            var racers: [UserClient] = []
            for index in 0..<6 { racers.append(try await harness.user("racer\(index)")) }
            let statuses = try await withThrowingTaskGroup(of: (user: String, status: Int, property: String?).self) { group in
                for racer in racers {
                    group.addTask {
                        let response = try await racer.join(channel)
                        return (racer.id, response.status, response.json?["data"]?["property"]?.stringValue)
                    }
                }
                var all: [(user: String, status: Int, property: String?)] = []
                for try await status in group { all.append(status) }
                return all
            }
            #expect(statuses.filter { $0.status == 204 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0.status == 422 && $0.property == "members" }.count == racers.count - 1, "\(statuses)")
            let members = try await owner.get("/\(path(channel))/members?page_size=1")
            #expect(members.headers.first(name: "Layer-Count") == "250")
            // A member leaves: a seat opens for one who lost the race.
            #expect(try await owner.leave(channel, user: "member1").status == 204)
            let loser = try #require(racers.first { racer in statuses.contains { $0.user == racer.id && $0.status == 422 } })
            #expect(try await loser.join(channel).status == 204)
            #expect(try await owner.get("/\(path(channel))/members?page_size=1").headers.first(name: "Layer-Count") == "250")
        }
    }

    @Test("Of several users creating a channel of one name at once, one creates it and the others are told of it")
    func oneName() async throws {
        try await SyncHarness.run { harness in
            var creators: [UserClient] = []
            for index in 0..<6 { creators.append(try await harness.user("creator\(index)")) }
            let answers = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
                for creator in creators {
                    group.addTask {
                        let response = try await creator.post("/channels", channelBody("the one", members: []))
                        let id = response.status == 201 ? response.json?["id"] : response.json?["data"]?["id"]
                        return (response.status, response.errorID, id?.stringValue)
                    }
                }
                var all: [(Int, String?, String?)] = []
                for try await answer in group { all.append(answer) }
                return all
            }
            #expect(answers.filter { $0.0 == 201 }.count == 1, "\(answers)")
            #expect(answers.filter { $0.0 == 409 && $0.1 == "conflict" }.count == creators.count - 1, "\(answers)")
            #expect(Set(answers.compactMap(\.2)).count == 1, "every answer names the same channel")
            let server = try await harness.server()
            #expect(try await server.get("/channels").headers.first(name: "Layer-Count") == "1")
        }
    }
}
