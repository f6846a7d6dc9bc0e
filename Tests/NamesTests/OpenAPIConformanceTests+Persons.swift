import AsyncHTTPClient
import Foundation
import LayerModels
import LayerNames
import LayerServer
import LayerTesting
import NIOCore
import NIOHTTP1
import PostgresNIO
import Testing

extension OpenAPIConformanceTests {
    // MARK: Persons

    @Test("Adding, reading and deduplicating persons answer as documented")
    func persons() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let added = try await api.call(
                .POST, "/persons", 201, as: alice,
                json: [
                    "persons": [
                        person(
                            "Alice", "Liddell", [("system", "alice"), ("email", "alice@example.com")], birthday: "1852-05-04"),
                        person("Lorina", "Liddell", [("email", "lorina@example.com")], location: "Oxford"),
                        ["first_name": "Edith", "devices": ["a phone"], "gender": "female", "id": "ignored"],
                    ]
                ])
            let persons = try #require(added.json?["persons"]?.arrayValue)
            #expect(persons.count == 3)
            let id = try #require(persons[0]["id"]?.stringValue)
            #expect(added.json?["matches"]?.arrayValue != nil)

            // Records that are not valid: every problem is named, and nothing is stored.
            let invalid = try await api.call(
                .POST, "/persons", 422, as: alice,
                json: ["persons": [["first_name": 5], person("Ok", nil), ["last_name": "X", "colour": "red"], [:]]])
            api.expect(invalid.json?["data"], is: "NamesRecordErrors")
            let errors = invalid.json?["data"]?["errors"]?.arrayValue ?? []
            #expect(Set(errors.compactMap { $0["index"]?.numberValue }) == [0, 2, 3], "\(invalid.text)")
            #expect(invalid.errorProperty == "persons[0].first_name")
            try await api.call(.POST, "/persons", 422, as: alice, json: ["persons": []])
            try await api.call(.POST, "/persons", 422, as: alice, json: ["persons": "Alice"])
            try await api.call(.POST, "/persons", 422, as: alice, json: [:])
            try await api.call(.POST, "/persons", 422, as: alice, json: ["persons": [person("A", nil)], "colour": "red"])
            try await api.call(
                .POST, "/persons", 422, as: alice, json: ["persons": [["addresses": [["type": "email"]]]]])
            try await api.call(.POST, "/persons", 422, as: alice, json: ["Alice"])
            try await api.call(.POST, "/persons", 400, as: alice, body: ByteBuffer(string: "{"))
            try await api.call(.POST, "/persons", 400, as: alice)
            let many = try await api.call(
                .POST, "/persons", 413, as: alice, json: ["persons": .array(Array(repeating: person("A", nil), count: 1001))])
            #expect(many.json?["data"]?["limit"]?.numberValue == 1000)
            try await api.call(.POST, "/persons", 401, json: ["persons": [person("A", nil)]])
            try await api.call(.POST, "/persons", 406, as: alice, json: ["persons": [person("A", nil)]], accept: nil)

            // As anyone but its owner sees it: names and public addresses, no owner's fields.
            let read = try await api.call(.GET, "/persons/\(bareUUID(id))", 200, as: alice)
            #expect(read.json?["claimed"] == false && read.json?["birthday"] == nil)
            let encoded = id.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
            try await api.call(.GET, "/persons/\(encoded)", 200, as: alice)
            try await api.call(.GET, "/persons/\(UUID().lowercased)", 404, as: alice)
            try await api.call(.GET, "/persons/not-a-person", 404, as: alice)
            try await api.call(.GET, "/persons/\(bareUUID(id))", 401)

            let deduplicated = try await api.call(
                .POST, "/persons/deduplicate", 200, as: alice,
                json: [
                    "existing": [person("Alice", "Liddell", [("email", "alice@example.com")])],
                    "new": [
                        [
                            "id": "mine-1", "first_name": "Alice", "last_name": "Liddell",
                            "addresses": [["type": "email", "value": "alice@example.com"]],
                        ],
                        person("Mabel", nil),
                    ],
                ])
            let kept = deduplicated.json?["persons"]?.arrayValue ?? []
            #expect(kept.first?["id"] == "existing[0]" && kept.contains { $0["id"] == "new[1]" }, "\(deduplicated.text)")
            try await api.call(.POST, "/persons/deduplicate", 200, as: alice, json: ["new": [person("Mabel", nil)]])
            try await api.call(.POST, "/persons/deduplicate", 422, as: alice, json: ["existing": [person("Mabel", nil)]])
            try await api.call(.POST, "/persons/deduplicate", 422, as: alice, json: ["new": [["birthday": "1999-02-30"]]])
            try await api.call(.POST, "/persons/deduplicate", 422, as: alice, json: ["new": [], "old": []])
            try await api.call(
                .POST, "/persons/deduplicate", 413, as: alice,
                json: [
                    "existing": .array(Array(repeating: person("A", nil), count: 600)),
                    "new": .array(Array(repeating: person("B", nil), count: 600)),
                ])
            try await api.call(.POST, "/persons/deduplicate", 422, as: alice, json: "new")
        }
    }

    @Test("Claiming a person and setting its policy answer as documented, for its owner only")
    func ownership() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let id = try #require(
                try await api.call(
                    .POST, "/persons", 201, as: alice,
                    json: ["persons": [person("Alice", "Liddell", [("system", "alice"), ("email", "alice@example.com")])]]
                ).json?["persons"]?[0]?["id"]?.stringValue)
            let path = "/persons/\(bareUUID(id))"
            // Nobody sends another user's system address.
            try await api.call(
                .POST, "/persons", 422, as: bob, json: ["persons": [person("Alice", nil, [("system", "alice")])]])

            try await api.call(.POST, "\(path)/claim", 403, as: bob)
            try await api.call(.POST, "/persons/\(UUID().lowercased)/claim", 404, as: alice)
            let claimed = try await api.call(.POST, "\(path)/claim", 200, as: alice)
            #expect(claimed.json?["claimed"] == true && claimed.json?["barred_apps"] == [])
            #expect(claimed.json?["addresses"]?[0]?["policy"] == "public", "\(claimed.text)")
            try await api.call(.POST, "\(path)/claim", 200, as: alice)

            // The owner bars an app (another one: this app still sees the person).
            let elsewhere = LayerID(.apps, UUID()).uri
            let barred = try await api.call(.PATCH, path, 200, as: alice, json: ["barred_apps": [.string(elsewhere)]])
            #expect(barred.json?["barred_apps"] == [.string(elsewhere)])
            try await api.call(
                .POST, path, 200, as: alice, headers: [("X-HTTP-Method-Override", "PATCH")],
                json: ["barred_apps": [.string(elsewhere)]], documentedAs: "PATCH")
            try await api.call(.PATCH, path, 403, as: bob, json: ["barred_apps": []])
            try await api.call(.PATCH, path, 422, as: alice, json: ["barred_apps": ["not-an-app"]])
            try await api.call(.PATCH, path, 422, as: alice, json: ["barred_apps": "all"])
            try await api.call(.PATCH, path, 422, as: alice, json: [:])
            try await api.call(.PATCH, path, 422, as: alice, json: ["barred_apps": [], "colour": "red"])
            try await api.call(.PATCH, path, 400, as: alice)
            try await api.call(.PATCH, "/persons/\(UUID().lowercased)", 404, as: alice, json: ["barred_apps": []])
            try await api.call(.PATCH, path, 401, json: ["barred_apps": []])

            // Policy of one address.
            let email = "/addresses/" + "email:alice@example.com".addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
            let policy = try await api.call(.PATCH, path + email, 200, as: alice, json: ["policy": "known_only"])
            let address = policy.json?["addresses"]?.arrayValue?.first { $0["type"] == "email" }
            #expect(address?["policy"] == "known_only", "\(policy.text)")
            try await api.call(.PATCH, path + email, 200, as: alice, json: ["removed": false, "hidden": false])
            try await api.call(.PATCH, path + email, 403, as: bob, json: ["hidden": true])
            try await api.call(.PATCH, path + email, 422, as: alice, json: [:])
            try await api.call(.PATCH, path + email, 422, as: alice, json: ["policy": "secret"])
            try await api.call(.PATCH, path + email, 422, as: alice, json: ["hidden": "yes"])
            try await api.call(.PATCH, path + email, 422, as: alice, json: [true])
            try await api.call(.PATCH, path + "/addresses/email:someone@example.com", 404, as: alice, json: ["hidden": true])
            try await api.call(.PATCH, path + "/addresses/no-type-here", 422, as: alice, json: ["hidden": true])
            try await api.call(.PATCH, path + email, 406, as: alice, json: ["hidden": true], accept: nil)

            // Bob sees neither the known_only address nor the owner's fields.
            let seen = try await api.call(.GET, path, 200, as: bob)
            #expect(seen.json?["addresses"]?.arrayValue?.contains { $0["type"] == "email" } == false, "\(seen.text)")
            #expect(seen.json?["barred_apps"] == nil)

            // The entries of the person, and one the app's backend attached, detached by the owner.
            let server = try await api.backend()
            try await api.call(
                .POST, "\(server.prefix)/persons", 201, as: server,
                json: ["persons": [person("Alice", nil, [("system", "alice"), ("phone", "+14155550111")], verified: true)]])
            try await api.call(
                .POST, "\(server.prefix)/persons", 201, as: server,
                json: ["persons": [person("Alice", "L", [("phone", "+14155550111"), ("twitter", "stray")], verified: true)]])
            let listed = try await api.call(.GET, "\(path)/entries", 200, as: alice)
            let entries = listed.json?["entries"]?.arrayValue ?? []
            #expect(entries.count == 3 && entries[0]["source"] == "self" && entries[0]["yours"] == true, "\(listed.text)")
            let stray = try #require(entries.last?["id"]?.stringValue)
            try await api.call(.GET, "\(path)/entries", 403, as: bob)
            try await api.call(.GET, "\(path)/entries", 401)
            try await api.call(
                .DELETE, "\(path)/entries/\(bareUUID(try #require(entries[0]["id"]?.stringValue)))", 422, as: alice)
            try await api.call(.DELETE, "\(path)/entries/\(UUID().lowercased)", 404, as: alice)
            try await api.call(.DELETE, "\(path)/entries/\(bareUUID(stray))", 403, as: bob)
            let detached = try await api.call(.DELETE, "\(path)/entries/\(bareUUID(stray))", 200, as: alice)
            #expect(detached.json?["addresses"]?.arrayValue?.contains { $0["value"] == "stray" } == false, "\(detached.text)")
        }
    }

    @Test("Resolution and routing answer as documented")
    func resolution() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let id = try #require(
                try await api.call(
                    .POST, "/persons", 201, as: alice,
                    json: [
                        "persons": [
                            person(
                                "Alice", "Liddell",
                                [("system", "alice"), ("email", "alice@example.com"), ("phone", "+14155550122")])
                        ]
                    ]
                ).json?["persons"]?[0]?["id"]?.stringValue)
            func query(_ address: String) -> String { address.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)! }

            let resolved = try await api.call(.GET, "/resolve?address=\(query("email:alice@example.com"))", 200, as: bob)
            #expect(resolved.json?["person_id"]?.stringValue == id)
            try await api.call(.GET, "/resolve?address=\(query("email:nobody@example.com"))", 404, as: bob)
            try await api.call(.GET, "/resolve?address=no-type-here", 422, as: bob)
            try await api.call(.GET, "/resolve", 422, as: bob)
            try await api.call(.GET, "/resolve?address=\(query("email:alice@example.com"))&known=nothing", 422, as: bob)
            try await api.call(.GET, "/resolve?address=\(query("email:alice@example.com"))", 401)

            // known_only: only with another address of the same person.
            try await api.call(.POST, "/persons/\(bareUUID(id))/claim", 200, as: alice)
            try await api.call(
                .PATCH, "/persons/\(bareUUID(id))/addresses/\(query("email:alice@example.com"))", 200, as: alice,
                json: ["policy": "known_only"])
            try await api.call(.GET, "/resolve?address=\(query("email:alice@example.com"))", 404, as: bob)
            try await api.call(
                .GET, "/resolve?address=\(query("email:alice@example.com"))&known=\(query("phone:+14155550122"))", 200, as: bob)
            try await api.call(
                .GET, "/resolve?address=\(query("email:alice@example.com"))&known=\(query("system:alice"))", 404, as: bob)

            let app = LayerID(.apps, api.harness.fixture.app.id).uri
            let routed = try await api.call(
                .POST, "/route", 200, as: bob, json: ["address": "system:alice", "app_id": .string(app)])
            #expect(routed.json?["address"] == "system:alice" && routed.json?["person_id"]?.stringValue == id)
            let elsewhere = LayerID(.apps, UUID()).uri
            try await api.call(.POST, "/route", 404, as: bob, json: ["address": "system:alice", "app_id": .string(elsewhere)])
            try await api.call(.POST, "/route", 404, as: bob, json: ["address": "system:nobody", "app_id": .string(app)])
            try await api.call(.POST, "/route", 422, as: bob, json: ["address": "system:alice", "app_id": "not-an-app"])
            try await api.call(.POST, "/route", 422, as: bob, json: ["address": "nothing", "app_id": .string(app)])
            try await api.call(.POST, "/route", 422, as: bob, json: ["address": "system:alice"])
            try await api.call(.POST, "/route", 422, as: bob, json: ["address": "system:alice", "app_id": .string(app), "x": 1])
            try await api.call(.POST, "/route", 422, as: bob, json: [1])
            // A person who bars an app cannot be reached in it.
            try await api.call(.PATCH, "/persons/\(bareUUID(id))", 200, as: alice, json: ["barred_apps": [.string(elsewhere)]])
            try await api.call(.POST, "/route", 404, as: bob, json: ["address": "system:alice", "app_id": .string(elsewhere)])
            try await api.call(.POST, "/route", 401, json: ["address": "system:alice", "app_id": .string(app)])
        }
    }
}
