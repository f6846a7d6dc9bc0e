import Foundation
import LayerModels
import LayerTesting
import LayerVoIP
import Testing

/// Every way a call request can be wrong: a 4xx in the API's error shape naming the field, and no
/// call placed or moved.
@Suite struct BadInputTests {
    @Test("Calling yourself, an unknown user or a user of another app is refused, and nothing is placed")
    func badCallees() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bobDevice = try await (try await harness.user("bob")).device()
            let other = try await harness.fixture.registerApp(keyIndex: 1)
            let stranger = try await harness.user("stranger", app: other)
            let ghost = Party(name: "nobody-signed-in", token: "", harness: harness)
            for callee in [alice, ghost, stranger] {
                let refused = try await alice.call(callee)
                #expect(refused.status == 422 && refused.errorID == "invalid_property", "\(callee.name)")
                #expect(refused.errorProperty == "callee", "\(callee.name)")
            }
            #expect(try await alice.get("/calls").json == [], "nothing was placed")
            await bobDevice.close()
        }
    }

    @Test("Malformed fields of a call or an answer are 422 naming the field; a huge candidate list too")
    func malformedFields() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let good: [String: JSONValue] = [
                "callee": .string(bob.identity), "caller_token": "tok", "candidates": [hostCandidate], "media": "audio",
            ]
            func candidate(_ change: (inout [String: JSONValue]) -> Void) -> JSONValue {
                guard case .object(var fields) = hostCandidate else { return .null }
                change(&fields)
                return .object(fields)
            }
            let cases: [(field: String, value: JSONValue?, property: String)] = [
                ("callee", nil, "callee"), ("callee", 42, "callee"), ("callee", "", "callee"),
                ("caller_token", nil, "caller_token"), ("caller_token", "has space", "caller_token"),
                ("caller_token", .string(String(repeating: "t", count: 257)), "caller_token"),
                ("media", "hologram", "media"), ("ringtone", "bell", "ringtone"), ("candidates", "all", "candidates"),
                ("candidates", [candidate { $0["ip"] = "300.1.2.3" }], "candidates.0.ip"),
                ("candidates", [hostCandidate, candidate { $0["ip"] = "not-an-ip" }], "candidates.1.ip"),
                ("candidates", [candidate { $0["port"] = 0 }], "candidates.0.port"),
                ("candidates", [candidate { $0["port"] = 65536 }], "candidates.0.port"),
                ("candidates", [candidate { $0["port"] = .number(80.5) }], "candidates.0.port"),
                ("candidates", [candidate { $0["type"] = "magic" }], "candidates.0.type"),
                ("candidates", [candidate { $0["transport"] = "sctp" }], "candidates.0.transport"),
                ("candidates", [candidate { $0["priority"] = 1 }], "candidates.0.priority"),
                ("candidates", .array(Array(repeating: hostCandidate, count: 17)), "candidates"),
            ]
            for (field, value, property) in cases {
                var body = good
                body[field] = value
                let refused = try await alice.post("/calls", .object(body))
                #expect(refused.status == 422, "\(field): \(refused.text)")
                #expect(refused.errorProperty == property, "\(field) \(String(describing: value).prefix(40))")
            }
            #expect(try await alice.get("/calls").json == [], "nothing was placed")

            let id = try await alice.placeCall(to: bob)
            let answers: [(body: JSONValue, property: String)] = [
                (["callee_token": "t", "candidates": []], "device_id"),
                (["device_id": "phone", "candidates": []], "callee_token"),
                (
                    ["device_id": "phone", "callee_token": "t", "candidates": [candidate { $0["ip"] = "1.2.3" }]],
                    "candidates.0.ip"
                ),
                (["device_id": "phone", "callee_token": "t", "sdp": "v=0"], "sdp"),
            ]
            for (body, property) in answers {
                let refused = try await bob.post("\(bob.path(id))/answer", body)
                #expect(refused.status == 422 && refused.errorProperty == property, "\(property): \(refused.text)")
            }
            #expect(try await bob.post("\(bob.path(id))/reject", ["reason": "busy"]).errorProperty == "reason")
            #expect(try await alice.get(alice.path(id)).json?["state"] == "ringing", "no answer was taken")
            #expect(try await alice.get("/calls/not-a-call").status == 404)
            #expect(try await alice.get("/calls?page_size=0").errorProperty == "page_size")
        }
    }

    @Test("Answers after the call ended, and from a device of another user, change nothing")
    func answersThatComeTooLateOrFromElsewhere() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let carol = try await harness.user("carol")
            let id = try await alice.placeCall(to: bob)
            #expect(try await carol.answer(id).status == 404)
            #expect(try await alice.post("\(alice.path(id))/cancel").status == 200)
            let late = try await bob.answer(id)
            #expect(late.status == 409 && late.errorID == "conflict")
            let call = try #require(try await alice.get(alice.path(id)).json)
            #expect(call["state"] == "cancelled" && call["answered_device_id"] == .null && call["callee_token"] == .null)
        }
    }
}
