import Foundation
import LayerModels
import LayerTesting
import Testing

/// What a person decides about their own record, and what everyone else then sees and resolves.
@Suite struct PolicyTests {
    /// Ada's record, added by the app's backend with her user id; Ada and Bob signed in.
    static func adaClaimed(_ names: NamesHarness) async throws -> (id: String, ada: NamesClient, bob: NamesClient) {
        let id = try await names.server().addOne(
            person("Ada", "Lovelace", [("system", "ada"), ("email", "ada@example.com"), ("phone", "+44 20 7946 0958")]))
        let ada = try await names.user("ada")
        let claimed = try await ada.post("/persons/\(bareUUID(id))/claim", [:])
        #expect(claimed.status == 200, "\(claimed.text)")
        #expect(claimed.json?["claimed"] == true)
        return (id, ada, try await names.user("bob"))
    }

    @Test func onlyTheUserWhoseSystemAddressItHoldsMayClaimAPerson() async throws {
        try await NamesHarness.run { names in
            let id = try await names.server().addOne(person("Ada", "Lovelace", [("system", "ada")]))
            let bob = try await names.user("bob")
            let refused = try await bob.post("/persons/\(bareUUID(id))/claim", [:])
            #expect(refused.status == 403 && refused.errorID == "access_denied")
            // Nor may anyone change a person before it is claimed, the user of its system address included.
            let ada = try await names.user("ada")
            let early = try await ada.patch("/persons/\(bareUUID(id))/addresses/system:ada", ["policy": "known_only"])
            #expect(early.status == 403)
            let server = try await names.server()
            #expect(try await server.post("/persons/\(bareUUID(id))/claim", [:]).status == 404, "the app's backend cannot claim")
        }
    }

    @Test func nobodyButTheOwnerSeesTheFullListOfAddresses() async throws {
        try await NamesHarness.run { names in
            let (id, ada, bob) = try await Self.adaClaimed(names)
            let hidden = try await ada.patch(
                "/persons/\(bareUUID(id))/addresses/" + "phone:+442079460958".addingPercentEncoding(
                    withAllowedCharacters: .layerUnreserved)!,
                ["hidden": true])
            #expect(hidden.status == 200, "\(hidden.text)")
            // A Layer-Patch document works as well as a JSON object.
            let known = try await ada.client.request(
                .PATCH, "/persons/\(bareUUID(id))/addresses/email:ada@example.com", headers: ada.headers,
                json: [["operation": "set", "property": "policy", "value": "known_only"]], contentType: MediaType.layerPatch)
            #expect(known.status == 200, "\(known.text)")

            let own = try #require(try await ada.get("/persons/\(bareUUID(id))").json)
            #expect(own["addresses"]?.arrayValue?.count == 3, "the owner sees every address")
            let phone = own["addresses"]?.arrayValue?.first { $0["type"] == "phone" }
            #expect(phone?["hidden"] == true && phone?["policy"] == "public")

            // Others see only what they submitted themselves, of that only what is public: Bob
            // nothing, the app's backend (which sent all three) the system address.
            for (viewer, expected) in [(bob, [String]()), (try await names.server(), ["ada"])] {
                let seen = try #require(try await viewer.get("/persons/\(bareUUID(id))").json)
                #expect(seen["first_name"] == "Ada")
                let values = seen["addresses"]?.arrayValue?.compactMap { $0["value"]?.stringValue }
                #expect(values == expected, "\(values ?? [])")
                #expect(seen["devices"] == nil && seen["birthday"] == nil)
            }
            let bobPatch = try await bob.patch("/persons/\(bareUUID(id))/addresses/system:ada", ["hidden": true])
            #expect(bobPatch.status == 403 && bobPatch.errorID == "access_denied")
        }
    }

    @Test func aKnownOnlyAddressResolvesOnlyWithAnotherAddressOfThePerson() async throws {
        try await NamesHarness.run { names in
            let (id, ada, bob) = try await Self.adaClaimed(names)
            #expect(try await bob.resolve("email:ada@example.com").person == id, "public by default")
            _ = try await ada.patch("/persons/\(bareUUID(id))/addresses/email:ada@example.com", ["policy": "known_only"])
            #expect(try await bob.resolve("email:ada@example.com").status == 404)
            #expect(try await bob.resolve("email:ada@example.com", known: "phone:+442079460958").person == id)
            #expect(try await bob.resolve("email:ada@example.com", known: "phone:+15550000000").status == 404)
            #expect(try await bob.resolve("email:ada@example.com", known: "email:ada@example.com").status == 404)
            #expect(try await ada.resolve("email:ada@example.com").person == id, "the owner resolves her own")
        }
    }

    @Test func hiddenAddressesDoNotResolveAndRemovedOnesCountLess() async throws {
        try await NamesHarness.run { names in
            let (id, ada, bob) = try await Self.adaClaimed(names)
            let before = try #require(try await bob.resolve("phone:+442079460958").confidence)
            _ = try await ada.patch("/persons/\(bareUUID(id))/addresses/phone:%2B442079460958", ["removed": true])
            let removed = try await bob.resolve("phone:+442079460958")
            #expect(removed.person == id)
            #expect((removed.confidence ?? 1) < before, "a removed address is weighted down")
            _ = try await ada.patch("/persons/\(bareUUID(id))/addresses/phone:%2B442079460958", ["hidden": true])
            #expect(try await bob.resolve("phone:+442079460958").status == 404)
        }
    }

    @Test func routingGivesTheSystemAddressUnlessTheAppIsBarred() async throws {
        try await NamesHarness.run { names in
            let (id, ada, bob) = try await Self.adaClaimed(names)
            let app = names.fixture.app.uri
            let routed = try await bob.post("/route", ["address": "email:ada@example.com", "app_id": .string(app)])
            #expect(routed.status == 200, "\(routed.text)")
            #expect(routed.json?["person_id"]?.stringValue == id && routed.json?["address"] == "system:ada")

            let barred = try await ada.patch("/persons/\(bareUUID(id))", ["barred_apps": [.string(app)]])
            #expect(barred.status == 200 && barred.json?["barred_apps"]?.arrayValue?.count == 1, "\(barred.text)")
            #expect(try await bob.post("/route", ["address": "email:ada@example.com", "app_id": .string(app)]).status == 404)
            #expect(try await bob.get("/persons/\(bareUUID(id))").status == 404, "a barred app does not see the person")
            #expect(try await ada.get("/persons/\(bareUUID(id))").status == 200, "the owner still does")
        }
    }

    @Test func routeNeedsAnAddressThePersonMayBeReachedBy() async throws {
        try await NamesHarness.run { names in
            let bob = try await names.user("bob")
            _ = try await names.server().addOne(person("Ann", "Lee", [("email", "ann@example.com")]))
            let app = names.fixture.app.uri
            let noSystem = try await bob.post("/route", ["address": "email:ann@example.com", "app_id": .string(app)])
            #expect(noSystem.status == 404)
            let unknown = try await bob.post("/route", ["address": "email:nobody@example.com", "app_id": .string(app)])
            #expect(unknown.status == 404 && unknown.errorID == "not_found")
            let bad = try await bob.post("/route", ["address": "email:ann@example.com", "app_id": "not-an-app"])
            #expect(bad.status == 422 && bad.errorProperty == "app_id")
        }
    }
}
