import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOHTTP1
import Testing

/// The channel routes of the conformance suite, of the Client API and the Server API, and the
/// channel operations of `POST /sync`.
extension OpenAPIConformanceTests {
    @Test("Channels, their members and messages answer as documented")
    func channels() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let carol = try await api.user("carol")
            let start = try #require(try await bob.sync()["anchor"])

            let body = channelBody("guild", members: ["bob"], metadata: ["topic": "crafts"], id: UUID().lowercased)
            let created = try await api.call(.POST, "/channels", 201, as: alice, json: body)
            let channel = try #require(created.json?["id"]?.stringValue)
            let conflict = try await api.call(.POST, "/channels", 409, as: carol, json: channelBody("guild", members: []))
            api.expect(conflict.json?["data"], is: "Channel")
            let inUse = try await api.call(.POST, "/channels", 409, as: alice, json: body)
            api.expect(inUse.json?["data"], is: "Channel")
            try await api.call(.POST, "/channels", 422, as: alice, json: ["members": []])
            try await api.call(.POST, "/channels", 401, json: body)

            let channelPath = "/\(path(channel))"
            try await api.call(.GET, "/channels", 200, as: alice)
            try await api.call(.GET, "/channels?page_size=1&from_id=\(channel)", 200, as: alice)
            try await api.call(.GET, "/channels?page_size=0", 422, as: alice)
            try await api.call(.GET, channelPath, 200, as: alice)
            try await api.call(.GET, channelPath, 200, as: carol)
            try await api.call(.GET, "/channels/\(UUID().lowercased)", 404, as: alice)
            let rename: JSONValue = [["operation": "set", "property": "metadata.topic", "value": "smithing"]]
            try await api.patch(channelPath, 204, as: bob, json: rename)
            try await api.patch(channelPath, 403, as: carol, json: rename)
            try await api.patch(channelPath, 422, as: bob, json: [["operation": "set", "property": "name", "value": "x"]])

            let sent = try await api.call(
                .POST, "\(channelPath)/messages", 201, as: bob, json: .object(textMessage("hammer time")))
            let message = try #require(sent.json?["id"]?.stringValue)
            try await api.call(.POST, "\(channelPath)/messages", 403, as: carol, json: .object(textMessage("?")))
            try await api.call(.POST, "\(channelPath)/messages", 422, as: bob, json: ["parts": []])
            try await api.call(.GET, "\(channelPath)/messages", 200, as: alice)
            try await api.call(.GET, "\(channelPath)/messages", 403, as: carol)
            try await api.call(.GET, "/\(path(message))", 200, as: alice)
            try await api.call(.DELETE, "/\(path(message))?mode=my_devices", 422, as: bob)

            try await api.call(.PUT, "\(channelPath)/members/carol", 204, as: carol)
            try await api.call(.GET, "\(channelPath)/members", 200, as: carol)
            try await api.call(.GET, "\(channelPath)/members?page_size=501", 422, as: carol)
            try await api.call(.GET, "\(channelPath)/members/alice", 200, as: carol)
            try await api.call(.GET, "\(channelPath)/members/nobody", 404, as: carol)
            try await api.call(.DELETE, "\(channelPath)/members/alice", 403, as: carol)
            try await api.call(.DELETE, "\(channelPath)/members/carol", 204, as: carol)
            try await api.call(.GET, "\(channelPath)/members/alice", 403, as: carol)

            // The channel operations of the changelog, and of a snapshot.
            try await api.call(.POST, "/sync", 200, as: bob, json: ["anchor": start])
            try await api.call(.POST, "/sync", 200, as: bob, json: ["anchor": 0, "policy": "complete"])

            // The Server API.
            let (_, bearer, app) = try await api.backend()
            let serverChannel = "\(app)\(channelPath)"
            try await api.call(.GET, "\(app)/channels", 200, headers: bearer)
            try await api.call(.GET, "\(app)/channels?from_id=nope", 422, headers: bearer)
            try await api.call(.GET, serverChannel, 200, headers: bearer)
            try await api.call(.GET, "\(serverChannel)/members", 200, headers: bearer)
            try await api.call(.PUT, "\(serverChannel)/members/dave", 204, headers: bearer)
            try await api.call(.DELETE, "\(serverChannel)/members/dave", 204, headers: bearer)
            try await api.call(.DELETE, "\(serverChannel)/members/dave", 404, headers: bearer)
            try await api.call(.GET, "\(serverChannel)/messages", 200, headers: bearer)
            try await api.call(.GET, "\(serverChannel)/\(path(message))", 200, headers: bearer)
            try await api.call(.GET, "\(app)/channels/\(UUID().lowercased)", 404, headers: bearer)
            try await api.call(.DELETE, "\(serverChannel)/\(path(message))", 204, headers: bearer)
            try await api.call(.DELETE, channelPath, 403, as: bob)
            try await api.call(.DELETE, serverChannel, 204, headers: bearer)
            try await api.call(.DELETE, channelPath, 404, as: alice)
        }
    }
}
