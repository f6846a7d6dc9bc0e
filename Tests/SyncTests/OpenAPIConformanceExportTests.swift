import Foundation
import LayerModels
import LayerServer
import LayerTesting
import NIOHTTP1
import Testing
import _CryptoExtras

/// The Server API's badges, push-only notifications and data exports, as an app's backend uses them.
extension OpenAPIConformanceTests {
    @Test("The Server API's badges and push-only notifications answer as documented")
    func serverBadgesAndNotifications() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            try await api.call(.GET, "/conversations", 200, as: alice)
            let (_, bearer, app) = try await api.backend()
            let badge = "\(app)/users/alice/badge"
            try await api.call(.PUT, badge, 204, headers: bearer, json: ["external_unread_count": 4])
            let read = try await api.call(.GET, badge, 200, headers: bearer)
            #expect(read.json?["external_unread_count"] == 4)
            try await api.call(.PUT, badge, 422, headers: bearer, json: ["external_unread_count": -4])
            try await api.call(.PUT, "\(app)/users/nobody/badge", 404, headers: bearer, json: ["external_unread_count": 1])
            try await api.call(.GET, "\(app)/users/nobody/badge", 404, headers: bearer)
            try await api.call(.GET, badge, 401)

            let notifications = "\(app)/notifications"
            try await api.call(
                .POST, notifications, 202, headers: bearer,
                json: [
                    "recipients": ["alice", "layer:///identities/bob"],
                    "notification": ["title": "Hi", "text": "News", "sound": "chime.aiff"],
                ])
            try await api.call(
                .POST, notifications, 422, headers: bearer, json: ["recipients": [], "notification": ["text": "x"]])
            try await api.call(.POST, notifications, 422, headers: bearer, json: ["recipients": ["alice"]])
            try await api.call(.POST, notifications, 401, json: ["recipients": ["alice"], "notification": ["text": "x"]])
            try await api.call(.POST, notifications, 406, headers: bearer, json: ["recipients": ["alice"]], accept: nil)
        }
    }

    @Test("The Server API's data exports answer as documented")
    func serverExports() async throws {
        try await Self.withDocument { api in
            let (_, bearer, app) = try await api.backend()
            let key = try _RSA.Encryption.PrivateKey(pemRepresentation: TestKeys.key(7).pemRepresentation)
            let pem = key.publicKey.pemRepresentation

            let security = "\(app)/export_security"
            try await api.call(.GET, security, 200, headers: bearer)
            try await api.call(.POST, "\(app)/exports", 422, headers: bearer)
            try await api.call(.PUT, security, 422, headers: bearer, json: ["public_key": "nope"])
            try await api.call(.PUT, security, 200, headers: bearer, json: ["public_key": .string(pem)])
            let registered = try await api.call(.GET, security, 200, headers: bearer)
            #expect(registered.json?["public_key"] == .string(pem))

            let schedule = "\(app)/export_schedule"
            try await api.call(.GET, schedule, 200, headers: bearer)
            try await api.call(.PUT, schedule, 200, headers: bearer, json: ["events": ["message.sent"], "interval": "daily"])
            try await api.call(.PUT, schedule, 200, headers: bearer, json: ["events": ["message.read"]])
            try await api.call(.PUT, schedule, 422, headers: bearer, json: ["events": ["message.sent", "message.exploded"]])
            try await api.call(.PUT, schedule, 200, headers: bearer, json: ["events": [], "interval": "disabled"])

            let created = try await api.call(.POST, "\(app)/exports", 202, headers: bearer)
            let id = try #require(created.json?["id"]?.stringValue.flatMap { LayerID(parsing: $0, as: .exports) }).uuid.lowercased
            let export = "\(app)/exports/\(id)"
            var status = try await api.call(.GET, "\(export)/status", 200, headers: bearer)
            let deadline = ContinuousClock.now + .seconds(90)
            while status.json?["status"] != "completed", ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(200))
                status = try await api.call(.GET, "\(export)/status", 200, headers: bearer)
            }
            #expect(status.json?["status"] == "completed")
            try await api.call(.GET, export, 200, headers: bearer)
            let list = try await api.call(.GET, "\(app)/exports?page_size=10", 200, headers: bearer)
            #expect(list.headers.first(name: "Layer-Count") == "1")
            try await api.call(.GET, "\(app)/exports?from_id=nope", 422, headers: bearer)
            let download = try await api.call(.GET, "\(export)/download", 200, headers: bearer)
            #expect(download.body.readableBytes == status.json?["size"]?.intValue)
            try await api.call(.GET, "\(app)/exports/\(UUID().lowercased)/download", 404, headers: bearer)
            try await api.call(.DELETE, export, 204, headers: bearer)
            try await api.call(.DELETE, export, 404, headers: bearer)
            try await api.call(.GET, "\(export)/status", 404, headers: bearer)
            try await api.call(.GET, "\(app)/exports", 401)
        }
    }
}
