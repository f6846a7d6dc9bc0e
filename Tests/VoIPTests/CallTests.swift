import Foundation
import LayerModels
import LayerTesting
import LayerVoIP
import Testing

/// Calls from ring to end, over real HTTP, real push and real PostgreSQL.
@Suite struct CallTests {
    @Test("A call rings every device of the callee; the answer reaches the caller and stops the other devices ringing")
    func ringAnswerHangup() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let aliceDevice = try await alice.device()
            let bobPhone = try await bob.device()
            let bobTablet = try await bob.device()

            let placed = try await alice.call(bob, token: "alice-token", media: "video")
            #expect(placed.status == 201, "\(placed.text)")
            let call = try #require(placed.json)
            #expect(call["state"] == "ringing" && call["media"] == "video")
            #expect(call["caller"]?.stringValue == alice.identity && call["callee"]?.stringValue == bob.identity)
            let id = try #require(call["id"]?.stringValue)
            #expect(id.hasPrefix("layer:///calls/"))

            for device in [bobPhone, bobTablet] {
                let ring = try await device.callSignal("call.ringing")
                #expect(ring["call"]?["id"]?.stringValue == id)
                #expect(ring["call"]?["caller_token"] == "alice-token")
                #expect(ring["call"]?["caller_candidates"] == [hostCandidate])
            }

            let answered = try await bob.answer(id, device: "tablet", token: "bob-token")
            #expect(answered.status == 200, "\(answered.text)")
            #expect(answered.json?["state"] == "answered" && answered.json?["answered_device_id"] == "tablet")

            // The caller learns the callee's token and candidates, on push and by reading the call.
            let toCaller = try await aliceDevice.callSignal("call.answered")
            #expect(toCaller["call"]?["callee_token"] == "bob-token")
            #expect(toCaller["call"]?["callee_candidates"] == [relayCandidate])
            let read = try await alice.get(alice.path(id))
            #expect(read.status == 200 && read.json?["callee_token"] == "bob-token")
            // Every device of the callee hears it was answered (and by which device): the others stop ringing.
            for device in [bobPhone, bobTablet] {
                #expect(try await device.callSignal("call.answered")["call"]?["answered_device_id"] == "tablet")
            }

            let hungUp = try await alice.post("\(alice.path(id))/hangup")
            #expect(hungUp.status == 200 && hungUp.json?["state"] == "ended" && hungUp.json?["ended_by"] == "caller")
            #expect(try await bobPhone.callSignal("call.ended")["call"]?["id"]?.stringValue == id)
            #expect(try await aliceDevice.callSignal("call.ended")["call"]?["state"] == "ended")

            // History: who called whom, when, how long, how it ended.
            for party in [alice, bob] {
                let history = try await party.get("/calls")
                #expect(history.status == 200 && history.headers.first(name: "Layer-Count") == "1")
                let entry = try #require(history.json?[0])
                #expect(entry["id"]?.stringValue == id && entry["state"] == "ended")
                #expect(entry["answered_at"]?.stringValue != nil && entry["ended_at"]?.stringValue != nil)
                #expect((entry["duration_seconds"]?.numberValue ?? -1) >= 0)
            }
            for device in [aliceDevice, bobPhone, bobTablet] { await device.close() }
        }
    }

    @Test("Ten devices answering at once: exactly one wins, the nine others get 409 conflict")
    func firstAnswerWins() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let id = try await alice.placeCall(to: bob)
            let statuses = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for device in 0..<10 {
                    group.addTask {
                        let response = try await bob.answer(id, device: "device-\(device)", token: "token-\(device)")
                        return (response.status, response.errorID ?? "")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0.0 == 200 }.count == 1)
            #expect(statuses.filter { $0 == (409, "conflict") }.count == 9)
            // The stored call is the winner's, whole: its device and its token together.
            let call = try #require(try await alice.get(alice.path(id)).json)
            let device = try #require(call["answered_device_id"]?.stringValue)
            #expect(call["callee_token"]?.stringValue == "token-" + device.dropFirst("device-".count))
        }
    }

    @Test("Every transition the state machine does not have is 409 and changes nothing; each action only by its side")
    func illegalTransitions() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let ringing = try await alice.placeCall(to: bob)
            // Ringing: no hang-up yet; the callee cannot cancel, the caller cannot answer or reject.
            #expect(try await alice.post("\(alice.path(ringing))/hangup").status == 409)
            #expect(try await bob.post("\(bob.path(ringing))/cancel").status == 403)
            #expect(try await alice.answer(ringing).status == 403)
            #expect(try await alice.post("\(alice.path(ringing))/reject").status == 403)
            #expect(try await alice.get(alice.path(ringing)).json?["state"] == "ringing")

            // Rejected: nothing moves it any more.
            #expect(try await bob.post("\(bob.path(ringing))/reject").json?["state"] == "rejected")
            #expect(try await bob.answer(ringing).status == 409)
            #expect(try await alice.post("\(alice.path(ringing))/cancel").status == 409)
            #expect(try await bob.post("\(bob.path(ringing))/hangup").status == 409)
            let rejected = try #require(try await alice.get(alice.path(ringing)).json)
            #expect(rejected["state"] == "rejected" && rejected["ended_by"] == "callee" && rejected["callee_token"] == .null)

            // Cancelled by the caller while ringing; answering it afterwards is too late.
            let cancelled = try await alice.placeCall(to: bob)
            #expect(try await alice.post("\(alice.path(cancelled))/cancel").json?["state"] == "cancelled")
            let late = try await bob.answer(cancelled)
            #expect(late.status == 409 && late.errorID == "conflict")

            // Answered: no cancel, no reject, no second answer; either side hangs up, once.
            let answered = try await alice.placeCall(to: bob)
            #expect(try await bob.answer(answered).status == 200)
            #expect(try await alice.post("\(alice.path(answered))/cancel").status == 409)
            #expect(try await bob.post("\(bob.path(answered))/reject").status == 409)
            #expect(try await bob.answer(answered, device: "other").status == 409)
            #expect(try await bob.post("\(bob.path(answered))/hangup").json?["ended_by"] == "callee")
            #expect(try await alice.post("\(alice.path(answered))/hangup").status == 409)
        }
    }

    @Test("Only the caller and the callee see or act on a call; a list holds only one's own calls")
    func onlyThePartiesSeeACall() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let mallory = try await harness.user("mallory")
            let id = try await alice.placeCall(to: bob)
            #expect(try await mallory.get(mallory.path(id)).status == 404)
            let answer = try await mallory.answer(id)
            #expect(answer.status == 404 && answer.errorID == "not_found")
            #expect(try await mallory.post("\(mallory.path(id))/hangup").status == 404)
            let list = try await mallory.get("/calls")
            #expect(list.json == [] && list.headers.first(name: "Layer-Count") == "0")
            #expect(try await alice.get(alice.path(id)).json?["state"] == "ringing", "nothing changed")
        }
    }

    @Test("An unanswered call becomes missed after the ring timeout, once, and the devices hear it")
    func ringTimeout() async throws {
        try await VoIPHarness.run(settings: VoIPSettings(stunPort: 0, ringTimeoutSeconds: 1)) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let bobPhone = try await bob.device()
            let id = try await alice.placeCall(to: bob)
            _ = try await bobPhone.callSignal("call.ringing")
            let missed = try await bobPhone.callSignal("call.missed", timeout: .seconds(5))
            #expect(missed["call"]?["id"]?.stringValue == id && missed["call"]?["ended_by"] == "timeout")
            #expect(try await alice.get(alice.path(id)).json?["state"] == "missed")
            #expect(try await bob.answer(id).status == 409)
            // Missed once: a signal may come again (delivery is at least once), but only of the same move.
            do {
                let again = try await bobPhone.callSignal("call.missed", timeout: .milliseconds(800))
                #expect(again["call"]?["ended_at"] == missed["call"]?["ended_at"], "a second move to missed")
            } catch is PushTimeout {}
            await bobPhone.close()
        }
    }

    @Test("A callee device that connects while the call rings gets the ring; one that connects after the answer does not")
    func lateDeviceGetsTheRing() async throws {
        try await VoIPHarness.run { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let id = try await alice.placeCall(to: bob)
            let late = try await bob.device()
            #expect(try await late.callSignal("call.ringing")["call"]?["id"]?.stringValue == id)
            #expect(try await bob.answer(id).status == 200)
            let after = try await bob.device()
            do {
                let ring = try await after.callSignal("call.ringing", timeout: .milliseconds(800))
                Issue.record("a ring after the answer: \(ring)")
            } catch is PushTimeout {}
            for device in [late, after] { await device.close() }
        }
    }

    @Test("A ringing call whose caller has had no device online for the grace period is cancelled")
    func callerGone() async throws {
        try await VoIPHarness.run(settings: VoIPSettings(stunPort: 0, callerGraceSeconds: 1)) { harness in
            let alice = try await harness.user("alice")
            let bob = try await harness.user("bob")
            let bobPhone = try await bob.device()
            let aliceDevice = try await alice.device()
            let id = try await alice.placeCall(to: bob)
            await aliceDevice.close()
            let cancelled = try await bobPhone.callSignal("call.cancelled", timeout: .seconds(10))
            #expect(cancelled["call"]?["id"]?.stringValue == id && cancelled["call"]?["ended_by"] == "caller_gone")

            // A caller who never had a device online (a backend calling with curl) is not cancelled.
            let fromCurl = try await alice.placeCall(to: bob)
            try await Task.sleep(for: .seconds(4))
            #expect(try await alice.get(alice.path(fromCurl)).json?["state"] == "ringing")
            await bobPhone.close()
        }
    }
}
