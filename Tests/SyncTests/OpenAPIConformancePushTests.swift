import Foundation
import LayerModels
import LayerServer
import LayerTesting
import Testing

/// Push tokens and the push failure log, as the document says they answer.
extension OpenAPIConformanceTests {
    @Test("Push tokens and the push failure log answer as documented")
    func pushTokensAndFailures() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let token: JSONValue = ["token": "0a1b2c3d4e5f60718293a4b5c6d7e8f9", "type": "apns", "device_id": "phone-1"]
            try await api.call(.POST, "/push_tokens", 202, as: alice, json: token)
            try await api.call(.POST, "/push_tokens", 202, as: alice, json: ["token": "f-1", "type": "gcm", "device_id": "tab"])
            try await api.call(.POST, "/push_tokens", 422, as: alice, json: ["token": "x", "type": "wns", "device_id": "d"])
            try await api.call(.POST, "/push_tokens", 422, as: alice, json: ["type": "fcm", "device_id": "d"])
            try await api.call(.POST, "/push_tokens", 406, as: alice, json: token, accept: nil)
            try await api.call(.POST, "/push_tokens", 401, json: token)
            try await api.call(.DELETE, "/push_tokens/phone-1", 202, as: alice)
            try await api.call(.DELETE, "/push_tokens/phone-1", 202, as: alice)

            let (_, bearer, app) = try await api.backend()
            let log = try await api.call(.GET, "\(app)/push_failures", 200, headers: bearer)
            #expect(log.json == [])
            try await api.call(.GET, "\(app)/push_failures", 401)
        }
    }
}
