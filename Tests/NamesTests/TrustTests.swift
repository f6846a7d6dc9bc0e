import Foundation
import LayerModels
import LayerTesting
import Testing

/// The store believes only what is proven: who vouched for each entry decides what it may link,
/// how much it counts and who sees it (issue 25, findings 1, 2, 5, 6 and 9).
@Suite struct TrustTests {
    /// Finding 1: a user who sends another user's `system` address next to their own cannot merge
    /// their record into that user's person, and so cannot claim it.
    @Test func aUserMaySubmitASystemAddressOnlyForThemselves() async throws {
        try await NamesHarness.run { names in
            let victim = try await names.server().addOne(
                person("Vic", "Tim", [("system", "vic"), ("email", "vic@example.com")], birthday: "1970-01-01"))
            let mallory = try await names.user("mallory")
            let takeover = try await mallory.post(
                "/persons", ["persons": [person("Vic", "Tim", [("system", "vic"), ("system", "mallory")])]])
            #expect(takeover.status == 422, "\(takeover.text)")
            #expect(takeover.errorProperty == "persons[0].addresses[0].value", "\(takeover.text)")
            let claim = try await mallory.post("/persons/\(bareUUID(victim))/claim", [:])
            #expect(claim.status == 403, "\(claim.text)")
            let seen = try #require(try await mallory.get("/persons/\(bareUUID(victim))").json)
            #expect(seen["birthday"] == nil && seen["addresses"]?.arrayValue?.isEmpty == true, "\(seen)")
            // Nor through an address book.
            let book = try await mallory.post(
                "/address-books", ["contacts": [person("Vic", nil, [("system", "vic"), ("system", "mallory")])]])
            #expect(book.status == 422 && book.errorProperty == "contacts[0].addresses[0].value", "\(book.text)")
            // Her own system address she may send.
            let own = try await mallory.post("/persons", ["persons": [person("Mal", "Lory", [("system", "mallory")])]])
            #expect(own.status == 201, "\(own.text)")
        }
    }

    /// Finding 1: the owner is the user who claimed first, whatever their ids.
    @Test func theOwnerIsTheUserWhoClaimedFirst() async throws {
        try await NamesHarness.run { names in
            let id = try await names.server().addOne(
                person("Sam", "Shared", [("system", "zed"), ("system", "abe")], birthday: "1980-02-03"))
            let zed = try await names.user("zed")
            let abe = try await names.user("abe")
            #expect(try await zed.post("/persons/\(bareUUID(id))/claim", [:]).status == 200)
            #expect(try await abe.post("/persons/\(bareUUID(id))/claim", [:]).status == 200)
            let byZed = try #require(try await zed.get("/persons/\(bareUUID(id))").json)
            #expect(byZed["birthday"] == "1980-02-03", "the first to claim owns it: \(byZed)")
            let byAbe = try #require(try await abe.get("/persons/\(bareUUID(id))").json)
            #expect(byAbe["birthday"] == nil, "a later claim does not make an owner: \(byAbe)")
            let patch = try await abe.patch("/persons/\(bareUUID(id))/addresses/system:zed", ["hidden": true])
            #expect(patch.status == 403, "\(patch.text)")
        }
    }

    /// Finding 2: one user's many records, flagged verified, neither join nor outrank the person the
    /// app's backend vouched for.
    @Test func manyRecordsOfOneUserDoNotOutrankWhatTheAppVouchedFor() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let ceo = person(
                "Chief", "Exec", [("system", "ceo"), ("phone", "+14155550142")],
                verifiedAddresses: [("email", "ceo@corp.example")])
            let real = try await server.addOne(ceo)
            let mallory = try await names.user("mallory")
            let forged = (0..<8).map { _ in
                person(
                    "Chief", "Exec",
                    [("system", "mallory"), ("email", "ceo@corp.example"), ("phone", "+14155550142"), ("twitter", "mal")],
                    verified: true)
            }
            _ = try await mallory.add(forged)
            let bob = try await names.user("bob")
            #expect(try await bob.resolve("email:ceo@corp.example").person == real)
            #expect(try await bob.resolve("phone:+14155550142").person == real, "the app's word goes first")
            #expect(try await bob.resolve("system:mallory").person != real, "her records did not join the CEO's")
            let routed = try await bob.post(
                "/route", ["address": "email:ceo@corp.example", "app_id": .string(names.fixture.app.uri)])
            #expect(routed.json?["address"] == "system:ceo", "\(routed.text)")
            // Eight entries of one submitter are one submitter.
            let own = try await bob.resolve("twitter:mal")
            #expect(own.confidence == 0.75, "\(own)")
            let mine = try #require(own.person)
            let shown = try #require(try await mallory.get("/persons/\(bareUUID(mine))").json)
            #expect(shown["addresses"]?.arrayValue?.allSatisfy { $0["verified"] == false } == true, "\(shown)")
        }
    }

    /// Finding 5: `known` must be an address the caller could only know from the person: public,
    /// not hidden, not `system`, and not one the caller added itself.
    @Test func knownMustBeAPublicAddressTheCallerDidNotAdd() async throws {
        try await NamesHarness.run { names in
            let (id, ada, bob) = try await PolicyTests.adaClaimed(names)
            let person = bareUUID(id)
            #expect(
                try await ada.patch("/persons/\(person)/addresses/email:ada@example.com", ["policy": "known_only"]).status == 200)
            let phone = "phone:" + "+442079460958".addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
            #expect(try await bob.resolve("email:ada@example.com", known: "phone:+442079460958").person == id)
            #expect(try await bob.resolve("email:ada@example.com", known: "system:ada").status == 404, "system is no proof")
            #expect(
                try await names.server().resolve("email:ada@example.com", known: "phone:+442079460958").status == 404,
                "the app added the phone itself")
            #expect(try await ada.patch("/persons/\(person)/addresses/\(phone)", ["hidden": true]).status == 200)
            #expect(try await bob.resolve("email:ada@example.com", known: "phone:+442079460958").status == 404, "hidden")
        }
    }

    /// Finding 6: matches a user is shown compare only what the user may see of the other person.
    @Test func matchesShownToAUserCompareOnlyWhatTheyMaySee() async throws {
        try await NamesHarness.run { names in
            _ = try await names.server().addOne(
                person("Ada", "Lovelace", [("system", "ada"), ("email", "ada@example.com")], birthday: "1815-12-10"))
            let bob = try await names.user("bob")
            for guess in ["1815-12-10", "1999-01-01"] {
                let added = try await bob.add([person("Ada", "Lovelace", [("twitter", "guess\(guess)")], birthday: guess)])
                for match in added["matches"]?.arrayValue ?? [] {
                    let evidence = match["evidence"]?.objectValue ?? [:]
                    #expect(evidence["birthday"] == nil && evidence["email"] == nil, "\(guess): \(match)")
                }
            }
        }
    }

    /// Finding 9: anyone but the owner sees names and only the addresses they submitted themselves.
    @Test func aStrangerSeesOnlyTheAddressesTheySubmitted() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let id = try await server.addOne(
                person("Grace", "Hopper", [("system", "grace"), ("email", "grace@example.com"), ("phone", "+14155550177")]))
            let bob = try await names.user("bob")
            let seen = try #require(try await bob.get("/persons/\(bareUUID(id))").json)
            #expect(seen["first_name"] == "Grace")
            #expect(seen["addresses"]?.arrayValue?.isEmpty == true, "\(seen)")
            let byApp = try #require(try await server.get("/persons/\(bareUUID(id))").json)
            #expect(byApp["addresses"]?.arrayValue?.count == 3, "the app's backend submitted them: \(byApp)")
            // Resolution still reaches her, one address at a time.
            #expect(try await bob.resolve("phone:+14155550177").person == id)
        }
    }

    /// The owner sees which entries make their person, and detaches one that others attached.
    @Test func theOwnerDetachesAnEntryOthersAttached() async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let id = try await server.addOne(
                person("Ada", "Lovelace", [("system", "ada")], verifiedAddresses: [("email", "ada@example.com")]))
            let stray = person("Ada", "L", [("phone", "+14155550188")], verifiedAddresses: [("email", "ada@example.com")])
            #expect(try await server.addOne(stray) == id, "a verified e-mail joins them")
            let ada = try await names.user("ada")
            #expect(try await ada.post("/persons/\(bareUUID(id))/claim", [:]).status == 200)
            let bob = try await names.user("bob")
            #expect(try await bob.get("/persons/\(bareUUID(id))/entries").status == 403, "the owner's alone")

            let listed = try await ada.get("/persons/\(bareUUID(id))/entries")
            #expect(listed.status == 200, "\(listed.text)")
            let entries = try #require(listed.json?["entries"]?.arrayValue)
            #expect(entries.count == 2 && entries.allSatisfy { $0["source"] == "app" }, "\(entries)")
            let strayEntry = try #require(
                entries.first { $0["addresses"]?.arrayValue?.contains { $0["type"] == "phone" } == true }?["id"]?.stringValue)
            let ownEntry = try #require(entries.first { $0["id"]?.stringValue != strayEntry }?["id"]?.stringValue)
            let refused = try await ada.delete("/persons/\(bareUUID(id))/entries/\(bareUUID(ownEntry))")
            #expect(refused.status == 422 && refused.errorProperty == "entry", "the entry naming her stays: \(refused.text)")

            let detached = try await ada.delete("/persons/\(bareUUID(id))/entries/\(bareUUID(strayEntry))")
            #expect(detached.status == 200, "\(detached.text)")
            let kept = try #require(detached.json?["id"]?.stringValue)
            let values = detached.json?["addresses"]?.arrayValue?.compactMap { $0["value"]?.stringValue } ?? []
            #expect(Set(values) == ["ada", "ada@example.com"], "\(detached.text)")
            #expect(try await bob.resolve("phone:+14155550188").person != kept)
            #expect(try await bob.resolve("email:ada@example.com").person == kept)
            #expect(try await ada.resolve("system:ada").person == kept)
            // It stays apart when the app states the e-mail again.
            let again = person("Ada", "Lovelace", verifiedAddresses: [("email", "ada@example.com")])
            _ = try await server.addOne(again)
            #expect(try await bob.resolve("phone:+14155550188").person != kept)
            let twice = try await ada.delete("/persons/\(bareUUID(kept))/entries/\(bareUUID(strayEntry))")
            #expect(twice.status == 404, "\(twice.text)")
        }
    }
}

extension JSONValue {
    var objectValue: [String: JSONValue]? {
        if case .object(let fields) = self { return fields }
        return nil
    }
}
