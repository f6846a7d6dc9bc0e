import Foundation
import LayerModels
import LayerTesting
import Testing

@testable import LayerSync

/// Responses (API 3.0): a Response message updates the response summary part of the message it
/// answers, for every participant, live and after a reload. The requests are the ones the Web
/// XDK's Choice message sends (`src/ui/messages/choice/` and `src/ui/messages/response/` of the
/// XDK), replayed: part ids chosen by the client, `role` and `parent-node-id` MIME parameters,
/// and CRDT operations in `changes`.
@Suite("Responses update the message they answer")
struct ResponseTests {
    static let summaryType = "application/vnd.layer.responsesummary-v2+json"

    /// A Choice message as the XDK sends it: its root part, with the id the XDK chose.
    static func choice(_ message: UUID, root: UUID, label: String = "Which colour?") -> JSONValue {
        let body: JSONValue = [
            "label": .string(label), "response_name": "selection", "allow_reselect": true,
            "choices": [["id": "red", "text": "Red"], ["id": "blue", "text": "Blue"]],
        ]
        return [
            "id": .string("layer:///messages/\(message.lowercased)"),
            "parts": [
                [
                    "id": .string("layer:///messages/\(message.lowercased)/parts/\(root.lowercased)"),
                    "mime_type": "application/vnd.layer.choice+json; role=root", "body": .string(body.jsonText),
                ]
            ],
        ]
    }

    /// Sends a Choice message as `sender` into `conversation` (failing unless 201): its id and
    /// the id of its root part, the node a response answers.
    static func sendChoice(_ sender: UserClient, to conversation: String) async throws -> (message: UUID, root: UUID) {
        let message = UUID()
        let root = UUID()
        let sent = try await sender.post("/\(path(conversation))/messages", choice(message, root: root))
        guard sent.status == 201 else { throw FixtureError("sending the choice answered \(sent.status): \(sent.text)") }
        return (message, root)
    }

    /// `body` (an object) with `key` set to `value`.
    static func with(_ body: JSONValue, _ key: String, _ value: JSONValue) -> JSONValue {
        guard case .object(var fields) = body else { return body }
        fields[key] = value
        return .object(fields)
    }

    /// A Response message as the XDK's ResponseModel sends it: the response part (root) with the
    /// operations, and the status text it shows, a child part of role `status`. The Server API
    /// chooses no ids (`ids: false`).
    static func response(
        to message: UUID, node: UUID?, _ changes: [JSONValue], text: String = "answered", format: String = "response-v2",
        ids: Bool = true, nodeAsPartID: Bool = false
    ) -> JSONValue {
        let id = UUID().lowercased
        let root = UUID().lowercased
        var body: [String: JSONValue] = ["response_to": .string("layer:///messages/\(message.lowercased)")]
        if let node {
            body["response_to_node_id"] = .string(
                nodeAsPartID ? "layer:///messages/\(message.lowercased)/parts/\(node.lowercased)" : node.lowercased)
        }
        if format == "response-v2" { body["changes"] = .array(changes) } else { body["participant_data"] = changes.first }
        var responsePart: [String: JSONValue] = [
            "mime_type": .string("application/vnd.layer.\(format)+json; role=root"),
            "body": .string(JSONValue.object(body).jsonText),
        ]
        let status: JSONValue = [
            "mime_type": .string("application/vnd.layer.status+json; role=status; parent-node-id=\(root)"),
            "body": .string(JSONValue.object(["text": .string(text)]).jsonText),
        ]
        guard ids else { return ["parts": [.object(responsePart), status]] }
        responsePart["id"] = .string("layer:///messages/\(id)/parts/\(root)")
        return ["id": .string("layer:///messages/\(id)"), "parts": [.object(responsePart), status]]
    }

    /// One CRDT operation as the XDK serializes it.
    static func op(_ operation: String, _ type: String, _ value: JSONValue, id: String, name: String = "selection") -> JSONValue {
        ["operation": .string(operation), "type": .string(type), "value": value, "name": .string(name), "id": .string(id)]
    }

    /// The summary part of `message` (as read), its MIME type and its body decoded.
    static func summary(_ message: JSONValue?, type: String = summaryType) -> (mimeType: String, body: JSONValue)? {
        guard
            let part = message?["parts"]?.arrayValue?.first(where: {
                $0["mime_type"]?.stringValue?.hasPrefix(type + ";") == true
            }),
            let text = part["body"]?.stringValue, let body = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        else { return nil }
        return (part["mime_type"]?.stringValue ?? "", body)
    }

    static func state(_ adds: [(JSONValue, [String])], removes: [String] = []) -> JSONValue {
        [
            "adds": .array(adds.map { ["value": $0.0, "ids": .array($0.1.map { .string($0) })] }),
            "removes": .array(removes.map { .string($0) }),
        ]
    }

    @Test("The XDK's choice flow: Bob's answer reaches Alice live on the message she sent, and both see it after a reload")
    func choiceFlow() async throws {
        try await SyncHarness.run(settings: quickPush) { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let message = UUID()
            let root = UUID()
            let sent = try await alice.post("/\(path(conversation))/messages", Self.choice(message, root: root))
            #expect(sent.status == 201, "\(sent.text)")
            let socket = try await harness.socket(alice)

            let answer = try await bob.post(
                "/\(path(conversation))/messages",
                Self.response(to: message, node: root, [Self.op("add", "LWW", "red", id: "a1b2c3")], text: "bob selected Red"))
            #expect(answer.status == 201, "\(answer.text)")

            // Alice's device hears of her message again, now with the summary, as the XDK reads it.
            let packet = try await socket.next { packet in
                packet["body"]?["operation"] == "create" && packet["body"]?["object"]?["id"] == sent.json?["id"]
            }
            let live = try #require(Self.summary(packet["body"]?["data"]), "\(packet)")
            #expect(live.mimeType == "\(Self.summaryType); role=response_summary; parent-node-id=\(root.lowercased)")
            #expect(live.body == ["bob": ["selection": Self.state([("red", ["a1b2c3"])])]])
            await socket.close()

            // Bob changes his mind; then Alice answers too. One summary part holds it all.
            for (user, change) in [
                (bob, Self.op("add", "LWW", "blue", id: "d4e5f6")), (alice, Self.op("add", "LWW", "red", id: "g7h8i9")),
            ] {
                let status = try await user.post(
                    "/\(path(conversation))/messages", Self.response(to: message, node: root, [change])
                ).status
                #expect(status == 201)
            }
            for user in [alice, bob] {
                let read = try await user.get("/messages/\(message.lowercased)").json
                #expect(read?["parts"]?.arrayValue?.count == 2, "\(String(describing: read))")
                #expect(read?["updated_at"]?.stringValue != nil)
                #expect(
                    Self.summary(read)?.body == [
                        "bob": ["selection": Self.state([("blue", ["d4e5f6"])], removes: ["a1b2c3"])],
                        "alice": ["selection": Self.state([("red", ["g7h8i9"])])],
                    ])
            }
            // The answers themselves are messages of the conversation, with their status text.
            let listed = try await alice.get("/\(path(conversation))/messages").json?.arrayValue ?? []
            #expect(listed.count == 4)
            #expect(
                listed.first?["parts"]?.arrayValue?.last?["mime_type"]?.stringValue?.hasPrefix(
                    "application/vnd.layer.status+json") == true)
        }
    }

    @Test(
        "Each CRDT type merges as the XDK's trackers do, a repeated operation changes nothing, and a device syncing from an old anchor gets the summary"
    )
    func crdtTypes() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let (message, root) = try await Self.sendChoice(alice, to: conversation)
            let anchor = try await alice.sync()["anchor"] ?? 0
            let changes: [[JSONValue]] = [
                // First writer wins: the second add is refused, and a remove does nothing.
                [Self.op("add", "FWW", "red", id: "f1", name: "first"), Self.op("add", "FWW", "blue", id: "f2", name: "first")],
                [Self.op("remove", "FWW", .null, id: "f1", name: "first")],
                // Last writer wins, nullable: a remove clears it.
                [
                    Self.op("add", "LWWN", "red", id: "n1", name: "nullable"),
                    Self.op("remove", "LWWN", .null, id: "n1", name: "nullable"),
                ],
                // A set: two values, one removed; the same value added twice keeps both ids.
                [Self.op("add", "Set", "red", id: "s1", name: "set"), Self.op("add", "Set", "blue", id: "s2", name: "set")],
                [Self.op("add", "Set", "red", id: "s3", name: "set"), Self.op("remove", "Set", .null, id: "s2", name: "set")],
                // Sent again (a device's retry under a new message id): nothing changes.
                [Self.op("add", "Set", "blue", id: "s2", name: "set"), Self.op("add", "FWW", "green", id: "f1", name: "first")],
                // An object value, as custom_response_data is.
                [Self.op("add", "LWWN", ["size": "large"], id: "c1", name: "custom_response_data")],
            ]
            for list in changes {
                let answer = try await bob.post("/\(path(conversation))/messages", Self.response(to: message, node: root, list))
                #expect(answer.status == 201, "\(answer.text)")
            }
            let expected: JSONValue = [
                "bob": [
                    "first": Self.state([("red", ["f1"])], removes: ["f2"]),
                    "nullable": Self.state([], removes: ["n1"]),
                    "set": Self.state([("red", ["s1", "s3"])], removes: ["s2"]),
                    "custom_response_data": Self.state([(["size": "large"], ["c1"])]),
                ]
            ]
            #expect(Self.summary(try await alice.get("/messages/\(message.lowercased)").json)?.body == expected)

            // Alice's other device, syncing from before the answers, gets her message with the summary.
            let operations = try await alice.catchUp(from: anchor).operations.filter {
                $0["type"] == "new_message" && $0["message"]?["id"]?.stringValue == "layer:///messages/\(message.lowercased)"
            }
            #expect(operations.count >= 1)
            #expect(Self.summary(operations.last?["message"])?.body == expected)
        }
    }

    @Test("Ten participants answering at once: every answer is kept")
    func concurrentAnswers() async throws {
        try await SyncHarness.run { harness in
            let alice = try await harness.user("alice")
            let names = (1...10).map { "voter\($0)" }
            let voters = try await withThrowingTaskGroup(of: UserClient.self) { group in
                for name in names { group.addTask { try await harness.user(name) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let conversation = try await alice.conversation(with: names, distinct: false)
            let (message, root) = try await Self.sendChoice(alice, to: conversation)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for voter in voters {
                    group.addTask {
                        try await voter.post(
                            "/\(path(conversation))/messages",
                            Self.response(to: message, node: root, [Self.op("add", "Set", .string(voter.id), id: voter.id)])
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 201, count: 10))
            let read = try await alice.get("/messages/\(message.lowercased)").json
            #expect(read?["parts"]?.arrayValue?.count == 2)
            let summary = Self.summary(read)?.body
            for voter in voters {
                #expect(summary?[voter.id] == ["selection": Self.state([(.string(voter.id), [voter.id])])])
            }
        }
    }

    @Test("The first format (participant_data) merges by key per user; no node id answers the root part")
    func participantDataFormat() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let (message, root) = try await Self.sendChoice(alice, to: conversation)
            // The second names the part by its whole id.
            let answers: [(JSONValue, UUID?)] = [(["selection": "red", "note": "quick"], nil), (["selection": "blue"], root)]
            for (data, node) in answers {
                let answer = try await bob.post(
                    "/\(path(conversation))/messages",
                    Self.response(to: message, node: node, [data], format: "response", nodeAsPartID: true))
                #expect(answer.status == 201, "\(answer.text)")
            }
            let read = try await bob.get("/messages/\(message.lowercased)").json
            let summary = try #require(Self.summary(read, type: "application/vnd.layer.responsesummary+json"))
            #expect(summary.mimeType.hasSuffix("role=response_summary; parent-node-id=\(root.lowercased)"))
            #expect(summary.body == ["participant_data": ["bob": ["selection": "blue", "note": "quick"]]])
        }
    }

    @Test("The WebSocket, POST /sync and the Server API sending for a user answer too")
    func otherDoors() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let (message, root) = try await Self.sendChoice(alice, to: conversation)
            let socket = try await harness.socket(bob)
            let overSocket = try await socket.request(
                "Message.create", objectID: conversation,
                data: Self.response(to: message, node: root, [Self.op("add", "Set", "red", id: "w1")]))
            #expect(overSocket["success"] == .bool(true), "\(overSocket)")
            await socket.close()
            // A device that was offline sends its answer in POST /sync.
            let offline = Self.response(to: message, node: root, [Self.op("add", "Set", "green", id: "o1")])
            _ = try await bob.sync(operations: [
                [
                    "type": "new_message", "message_id": offline["id"]!, "conversation_id": .string(conversation),
                    "parts": offline["parts"]!,
                ]
            ])
            let server = try await harness.server()
            let asAlice = Self.with(
                Self.response(to: message, node: root, [Self.op("add", "Set", "blue", id: "s1")], ids: false), "sender_id",
                .string(LayerID.identity(userID: "alice")))
            let sent = try await server.post("/\(path(conversation))/messages", asAlice)
            #expect(sent.status == 201, "\(sent.text)")
            let read = try await server.get("/\(path(conversation))/messages/\(message.lowercased)").json
            #expect(
                Self.summary(read)?.body == [
                    "bob": ["selection": Self.state([("red", ["w1"]), ("green", ["o1"])])],
                    "alice": ["selection": Self.state([("blue", ["s1"])])],
                ])
        }
    }

    @Test("A response that cannot apply is 422 naming what is wrong, and neither it nor the message it names changes")
    func badResponses() async throws {
        try await SyncHarness.run { harness in
            let (alice, bob, conversation) = try await harness.aliceAndBobInAConversation()
            let carol = try await harness.user("carol")
            let elsewhere = try await carol.conversation(with: ["bob"])
            let (message, root) = try await Self.sendChoice(alice, to: conversation)
            let other = UUID()
            #expect(try await carol.post("/\(path(elsewhere))/messages", Self.choice(other, root: UUID())).status == 201)
            let good = [Self.op("add", "LWW", "red", id: "x1")]

            var cases: [(JSONValue, String)] = [
                (Self.response(to: UUID(), node: nil, good), "parts.0.body"),  // no such message
                (Self.response(to: other, node: nil, good), "parts.0.body"),  // a message of another conversation
                (Self.response(to: message, node: UUID(), good), "parts.0.body"),  // no such part
                (Self.response(to: message, node: root, []), "parts.0.body"),
                (Self.response(to: message, node: root, [Self.op("add", "MAX", "red", id: "x1")]), "parts.0.body"),
                (Self.response(to: message, node: root, [Self.op("replace", "LWW", "red", id: "x1")]), "parts.0.body"),
                (Self.response(to: message, node: root, [Self.op("add", "LWW", "red", id: "")]), "parts.0.body"),
            ]
            let offTheRecord = Self.with(Self.response(to: message, node: root, good), "off_the_record", true)
            cases.append((offTheRecord, "off_the_record"))
            let notJSON: JSONValue = [
                "parts": [["mime_type": "application/vnd.layer.response-v2+json; role=root", "body": "not json"]]
            ]
            cases.append((notJSON, "parts.0.body"))
            for (body, property) in cases {
                let refused = try await bob.post("/\(path(conversation))/messages", body)
                #expect(refused.status == 422, "\(body): \(refused.text)")
                #expect(refused.errorProperty == property, "\(body): \(refused.text)")
            }
            // The system cannot answer: a response is a user's.
            let server = try await harness.server()
            let system = Self.with(Self.response(to: message, node: root, good, ids: false), "sender", ["name": "Robot"])
            let bySystem = try await server.post("/\(path(conversation))/messages", system)
            #expect(bySystem.status == 422, "\(bySystem.text)")
            #expect(bySystem.errorProperty == "parts.0.body")

            let listed = try await alice.get("/\(path(conversation))/messages").json?.arrayValue ?? []
            #expect(listed.count == 1, "no answer was stored")
            #expect(listed.first?["parts"]?.arrayValue?.count == 1, "the choice is as it was")
            #expect(listed.first?["updated_at"] == .null)
        }
    }
}

/// The merge itself, operation by operation, against the XDK's state tracker's rules.
@Suite("Response summary merge")
struct ResponseStateTests {
    func change(_ operation: String, _ type: String, _ value: JSONValue = .null, id: String) throws -> MessageResponse.Change {
        try MessageResponse.change(ResponseTests.op(operation, type, value, id: id), field: "parts.0.body", index: 0)
    }

    @Test("Each type's rule, and the same operations applied again change nothing")
    func rulesAndRepeats() throws {
        for type in ["FWW", "LWW", "LWWN", "Set"] {
            let adds = try (1...3).map { try change("add", type, .string("v\($0)"), id: "a\($0)") }
            let remove = try change("remove", type, id: "a2")
            var forward = ResponseState()
            for operation in adds + [remove] { forward.apply(operation) }
            var again = forward
            for operation in adds + [remove] { again.apply(operation) }
            #expect(again == forward, "\(type): applying everything twice changes nothing")
            switch type {
            case "FWW": #expect(forward.adds.map(\.value) == ["v1"] && forward.removes == ["a2", "a3"])
            case "LWW": #expect(forward.adds.map(\.value) == ["v3"] && forward.removes == ["a1", "a2"])
            case "LWWN": #expect(forward.adds.map(\.value) == ["v3"] && forward.removes == ["a1", "a2"])
            default: #expect(forward.adds.map(\.value) == ["v1", "v3"] && forward.removes == ["a2"])
            }
        }
    }

    @Test("A set reaches the same values whatever order its operations arrive in; an add whose remove came first stays removed")
    func removeBeforeAdd() throws {
        let operations = try [
            change("add", "Set", "red", id: "s1"), change("add", "Set", "blue", id: "s2"), change("add", "Set", "red", id: "s3"),
            change("remove", "Set", id: "s1"),
        ]
        var forward = ResponseState()
        var backward = ResponseState()
        for operation in operations { forward.apply(operation) }
        for operation in operations.reversed() { backward.apply(operation) }
        #expect(Set(forward.adds.map(\.value)) == Set(backward.adds.map(\.value)))
        #expect(Set(forward.adds.map(\.value)) == ["red", "blue"])
        var state = ResponseState()
        state.apply(try change("remove", "Set", id: "late"))
        state.apply(try change("add", "Set", "red", id: "late"))
        #expect(state.adds.isEmpty)
        #expect(state.removes == ["late"])
    }
}
