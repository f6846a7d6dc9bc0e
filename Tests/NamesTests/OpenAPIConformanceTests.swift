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

/// The name resolution service against its own `GET /openapi.yaml` (DESIGN section 3). The
/// service runs alone, as `layer-names` does (the auth service runs beside it, reached over HTTP),
/// so the document is the one it serves. The document lists exactly the routes its router serves,
/// every documented route answers as documented, and the real responses of every operation, for
/// users and for the app's backend, have a documented status, the required headers and a body of
/// the documented schema. The record matching is not what is checked here: the tests look at the
/// shapes of matches, never at their probabilities.
@Suite("OpenAPI conformance of the names service")
struct OpenAPIConformanceTests {
    /// A client of the names service that checks every response it gets against the document.
    struct Checked: CheckedAPI {
        let harness: NamesHarness
        /// The names service alone.
        let names: TestClient
        /// The names service's pool, to build a second router with the same routes.
        let postgres: PostgresClient
        let document: OpenAPIDocument

        var client: TestClient { names }

        /// `name`, signed in through the auth service; requests go to the names service.
        func user(_ name: String) async throws -> NamesClient {
            let signedIn = try await harness.user(name)
            return NamesClient(prefix: "", headers: signedIn.headers, client: names)
        }

        /// The app's backend with a fresh Server API token; its paths start with `prefix`.
        func backend() async throws -> NamesClient {
            let server = try await harness.server()
            return NamesClient(prefix: server.prefix, headers: server.headers, client: names)
        }
    }

    /// Runs the auth service (with its app and users) and, beside it, the names service alone.
    static func withDocument(_ body: @escaping @Sendable (Checked) async throws -> Void) async throws {
        try await NamesHarness.run { harness in
            try await LiveServer.run(
                [NamesService.configured(NamesSettings(authURL: harness.client.baseURL))],
                settings: ServerSettings(internalToken: harness.fixture.internalToken)
            ) { server in
                let names = TestClient(baseURL: server.baseURL, http: server.http)
                let served = try await names.request(.GET, "/openapi.yaml", accept: nil)
                #expect(served.status == 200)
                #expect(served.headers.first(name: "Content-Type") == "application/yaml")
                let document = try OpenAPIDocument(yaml: served.text)
                try await body(Checked(harness: harness, names: names, postgres: server.postgres, document: document))
            }
        }
    }

    // MARK: The document itself

    @Test("The document lists exactly the public routes the service serves, with the shared error shape")
    func documentListsThePublicRoutes() async throws {
        try await Self.withDocument { api in
            let document = api.document
            #expect(document.root["openapi"]?.stringValue?.hasPrefix("3.1.") == true)
            #expect(document.root["info"]?["title"] == "Layerline name resolution service")

            // The routes the service's router really has, minus the internal API, which is not public.
            let served = publicRoutes(
                of: [
                    NamesService(
                        settings: NamesSettings(authURL: "http://127.0.0.1:1"),
                        dependencies: ServiceDependencies(server: ServerSettings(internalToken: "unused"), postgres: api.postgres)
                    )
                ], postgres: api.postgres)
            #expect(served.contains("get /apps/{app}/persons/duplicates") && served.contains("post /route"))
            document.expectDescribes(exactly: served)
            #expect(document.unresolvedReferences.isEmpty, "unresolved $refs: \(document.unresolvedReferences)")
            document.expectUniqueOperationIDs()
            document.expectSharedResponseShapes()
            #expect(!document.operationNames.contains { $0.contains("/internal/") })
            // Every component of the service's own carries its name, so that the suite's document can hold them all.
            let common = try OpenAPIDocument(yaml: OpenAPISpec.common().yaml())
            guard case .object(let sections)? = document.root["components"] else { return }
            for case (let section, .object(let components)) in sections {
                for name in components.keys where common.root["components"]?[section]?[name] == nil {
                    #expect(name.hasPrefix("Names"), "components.\(section).\(name) is not named after the service")
                }
            }
        }
    }

    /// Calls every documented operation with its parameters' examples and no credentials: none is
    /// an unknown endpoint, every answer is documented, and exactly the operations that document
    /// 406 refuse a request without `Accept`.
    @Test("Every documented route is routed and answers as documented without credentials")
    func everyDocumentedRouteIsRouted() async throws {
        try await Self.withDocument { api in
            try await api.callEveryOperation(alsoExpect: { method, path, response in
                #expect(response.status != 405, "\(method) \(path) is not served with that method")
            })

            // What the router does not serve is not in the document either, and errs in its shape.
            let app = "/apps/\(api.harness.appID)"
            let person = UUID().lowercased
            try await api.expectUnserved([
                (.GET, "/person", 404), (.PUT, "/persons", 405), (.DELETE, "/persons/\(person)", 405),
                (.POST, "/resolve", 405), (.GET, "/route", 405),
                // What only a person's owner does has no Server API form.
                (.POST, "\(app)/persons/\(person)/claim", 404), (.POST, "/internal/v1/nothing", 404),
            ])
        }
    }

    @Test("The operational routes answer as documented")
    func operationalRoutes() async throws {
        try await Self.withDocument { api in
            let root = try await api.call(.GET, "/", 200, accept: nil)
            let links = root.headers.first(name: "Link") ?? ""
            #expect(links.contains("/persons>; rel=persons") && links.contains("/resolve>; rel=resolve"), "\(links)")
            for path in ["/health/live", "/health/ready", "/metrics", "/openapi.yaml"] {
                try await api.call(.GET, path, 200, accept: nil)
            }
            let ready = try await api.names.request(.GET, "/health/ready", accept: nil)
            #expect(ready.json?["checks"]?["auth"] == "ok")
        }
    }

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
            try await api.call(.POST, "/persons", 400, as: alice, json: ["Alice"])
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
            try await api.call(.POST, "/persons/deduplicate", 400, as: alice, json: "new")
        }
    }

    @Test("Claiming a person and setting its policy answer as documented, for its owner only")
    func ownership() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let id = try #require(
                try await api.call(
                    .POST, "/persons", 201, as: bob,
                    json: ["persons": [person("Alice", "Liddell", [("system", "alice"), ("email", "alice@example.com")])]]
                ).json?["persons"]?[0]?["id"]?.stringValue)
            let path = "/persons/\(bareUUID(id))"

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
            try await api.call(.PATCH, path + email, 400, as: alice, json: [true])
            try await api.call(.PATCH, path + "/addresses/email:someone@example.com", 404, as: alice, json: ["hidden": true])
            try await api.call(.PATCH, path + "/addresses/no-type-here", 422, as: alice, json: ["hidden": true])
            try await api.call(.PATCH, path + email, 406, as: alice, json: ["hidden": true], accept: nil)

            // Bob sees neither the known_only address nor the owner's fields.
            let seen = try await api.call(.GET, path, 200, as: bob)
            #expect(seen.json?["addresses"]?.arrayValue?.contains { $0["type"] == "email" } == false, "\(seen.text)")
            #expect(seen.json?["barred_apps"] == nil)
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
                    json: ["persons": [person("Alice", "Liddell", [("system", "alice"), ("email", "alice@example.com")])]]
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
                .GET, "/resolve?address=\(query("email:alice@example.com"))&known=\(query("system:alice"))", 200, as: bob)

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
            try await api.call(.POST, "/route", 400, as: bob, json: [1])
            // A person who bars an app cannot be reached in it.
            try await api.call(.PATCH, "/persons/\(bareUUID(id))", 200, as: alice, json: ["barred_apps": [.string(elsewhere)]])
            try await api.call(.POST, "/route", 403, as: bob, json: ["address": "system:alice", "app_id": .string(elsewhere)])
            try await api.call(.POST, "/route", 401, json: ["address": "system:alice", "app_id": .string(app)])
        }
    }

    // MARK: Address books

    @Test("Address books, their duplicates and consolidation answer as documented")
    func addressBooks() async throws {
        try await Self.withDocument { api in
            let alice = try await api.user("alice")
            let bob = try await api.user("bob")
            let charlie = person("Charlie", "Smith", [("email", "charlie@example.com")])
            let created = try await api.call(
                .POST, "/address-books", 201, as: alice,
                json: ["contacts": [charlie, person("Chuck", "Smith", [("phone", "+1 415 555 0100")]), charlie]])
            let book = try #require(created.json?["id"]?.stringValue)
            let contacts = try #require(created.json?["contacts"]?.arrayValue?.compactMap { $0["id"]?.stringValue })
            #expect(contacts.count == 3)
            let path = "/address-books/\(bareUUID(book))"

            let vCard = """
                BEGIN:VCARD\r
                VERSION:3.0\r
                N:Smith;Charlie;;;\r
                EMAIL;TYPE=work:charlie@example.com\r
                TEL:+1 415 555 0100\r
                BDAY:1985-04-12\r
                END:VCARD\r

                """
            let imported = try await api.call(
                .POST, "/address-books", 201, as: alice, body: ByteBuffer(string: vCard), contentType: "text/vcard")
            #expect(imported.json?["contacts"]?[0]?["last_name"] == "Smith", "\(imported.text)")
            let unreadable = try await api.call(
                .POST, "/address-books", 422, as: alice, body: ByteBuffer(string: "END:VCARD\r\n"), contentType: "text/vcard")
            api.expect(unreadable.json?["data"], is: "NamesRecordErrors")
            try await api.call(.POST, "/address-books", 201, as: alice, json: ["contacts": []])
            try await api.call(.POST, "/address-books", 422, as: alice, json: [:])
            try await api.call(.POST, "/address-books", 422, as: alice, json: ["contacts": [["phone": "1"]]])
            try await api.call(.POST, "/address-books", 400, as: alice, json: ["contacts"])
            try await api.call(.POST, "/address-books", 401, json: ["contacts": []])

            let read = try await api.call(.GET, path, 200, as: alice)
            #expect(read.json?["contacts"]?.arrayValue?.count == 3)
            try await api.call(.GET, path, 404, as: bob)
            try await api.call(.GET, "/address-books/\(UUID().lowercased)", 404, as: alice)
            try await api.call(.GET, "/address-books/nothing", 404, as: alice)

            let duplicates = try await api.call(.GET, "\(path)/duplicates", 200, as: alice)
            let pairs = duplicates.json?["matches"]?.arrayValue ?? []
            #expect(
                pairs.first?["contacts"]?.arrayValue?.compactMap(\.stringValue) == [contacts[0], contacts[2]],
                "the exact pair comes first: \(duplicates.text)")
            try await api.call(.GET, "\(path)/duplicates", 404, as: bob)

            let consolidated = try await api.call(
                .POST, "\(path)/consolidate", 200, as: alice, json: ["keep": .string(contacts[0]), "merge": .string(contacts[1])])
            #expect(consolidated.json?["id"]?.stringValue == contacts[0])
            #expect(consolidated.json?["addresses"]?.arrayValue?.count == 2, "\(consolidated.text)")
            try await api.call(
                .POST, "\(path)/consolidate", 404, as: alice, json: ["keep": .string(contacts[0]), "merge": .string(contacts[1])])
            try await api.call(
                .POST, "\(path)/consolidate", 404, as: bob, json: ["keep": .string(contacts[0]), "merge": .string(contacts[2])])
            try await api.call(
                .POST, "\(path)/consolidate", 422, as: alice, json: ["keep": .string(contacts[0]), "merge": .string(contacts[0])])
            try await api.call(.POST, "\(path)/consolidate", 422, as: alice, json: ["keep": "x", "merge": .string(contacts[2])])
            try await api.call(.POST, "\(path)/consolidate", 422, as: alice, json: ["keep": .string(contacts[0])])
            try await api.call(.POST, "\(path)/consolidate", 400, as: alice, json: [])
            #expect(try await api.call(.GET, path, 200, as: alice).json?["contacts"]?.arrayValue?.count == 2)
        }
    }

    // MARK: The Server API

    @Test("The app's backend gets every route of persons, resolution and address books as documented")
    func serverAPI() async throws {
        try await Self.withDocument { api in
            let server = try await api.backend()
            let app = server.prefix
            let added = try await api.call(
                .POST, "\(app)/persons", 201, as: server,
                json: [
                    "persons": [
                        person("Ada", "Lovelace", [("system", "ada"), ("email", "ada@example.com")], verified: true),
                        person("Ada", "Lovelace", [("email", "ada@example.com")], birthday: "1815-12-10"),
                        person("Augusta", "King", [("email", "ada@example.com")]),
                    ]
                ])
            let id = try #require(added.json?["persons"]?[0]?["id"]?.stringValue)
            try await api.call(.POST, "\(app)/persons", 422, as: server, json: ["persons": [["addresses": [["value": "x"]]]]])
            try await api.call(.POST, "\(app)/persons", 400, as: server, json: 1)
            try await api.call(.POST, "\(app)/persons", 401, json: ["persons": [person("A", nil)]])
            try await api.call(
                .POST, "\(app)/persons", 401, headers: [("Authorization", "Bearer not-a-token")],
                json: ["persons": [person("A", nil)]])
            try await api.call(.POST, "/apps/not-an-app/persons", 404, as: server, json: ["persons": [person("A", nil)]])
            try await api.call(.POST, "\(app)/persons", 406, as: server, json: ["persons": [person("A", nil)]], accept: nil)
            // The backend's limit is 10,000 records.
            try await api.call(
                .POST, "\(app)/persons", 201, as: server,
                json: ["persons": .array((0...1000).map { person("First\($0)", "Last\($0)") })])

            try await api.call(.GET, "\(app)/persons/\(bareUUID(id))", 200, as: server)
            try await api.call(.GET, "\(app)/persons/\(UUID().lowercased)", 404, as: server)
            try await api.call(
                .POST, "\(app)/persons/deduplicate", 200, as: server,
                json: ["existing": [person("Ada", "Lovelace", [])], "new": [person("Ada", "Lovelace", [])]])
            try await api.call(.POST, "\(app)/persons/deduplicate", 422, as: server, json: [:])

            // The bulk list of likely duplicates, with its count and pages.
            let page = try await api.call(.GET, "\(app)/persons/duplicates?min_probability=0&page_size=1", 200, as: server)
            #expect(page.headers.first(name: "Layer-Count").flatMap(Int.init) != nil)
            if let first = page.json?["matches"]?[0]?["id"]?.stringValue {
                let from = first.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
                try await api.call(.GET, "\(app)/persons/duplicates?min_probability=0&from_id=\(from)", 200, as: server)
            }
            try await api.call(.GET, "\(app)/persons/duplicates", 200, as: server)
            for query in [
                "min_probability=2", "min_probability=x", "page_size=0", "page_size=1001", "from_id=x",
                "from_id=\(UUID().lowercased)",
            ] {
                try await api.call(.GET, "\(app)/persons/duplicates?\(query)", 422, as: server)
            }
            try await api.call(.GET, "\(app)/persons/duplicates", 401)

            let resolved = try await api.call(.GET, "\(app)/resolve?address=system%3Aada", 200, as: server)
            #expect(resolved.json?["person_id"]?.stringValue == id)
            try await api.call(.GET, "\(app)/resolve?address=system%3Anobody", 404, as: server)
            try await api.call(.GET, "\(app)/resolve", 422, as: server)
            let appID = LayerID(.apps, api.harness.fixture.app.id).uri
            try await api.call(.POST, "\(app)/route", 200, as: server, json: ["address": "system:ada", "app_id": .string(appID)])
            try await api.call(.POST, "\(app)/route", 422, as: server, json: ["address": "system:ada"])

            // Ada claims her person and bars another app: the backend cannot route her there.
            let ada = try await api.user("ada")
            try await api.call(.POST, "/persons/\(bareUUID(id))/claim", 200, as: ada)
            let elsewhere = LayerID(.apps, UUID()).uri
            try await api.call(.PATCH, "/persons/\(bareUUID(id))", 200, as: ada, json: ["barred_apps": [.string(elsewhere)]])
            try await api.call(
                .POST, "\(app)/route", 403, as: server, json: ["address": "system:ada", "app_id": .string(elsewhere)])

            // Address books: the backend reads every book of the app, a user's too.
            let book = try #require(
                try await api.call(
                    .POST, "\(app)/address-books", 201, as: server, json: ["contacts": [person("A", "B"), person("A", "B")]]
                )
                .json?["id"]?.stringValue)
            let usersBook = try #require(
                try await api.call(.POST, "/address-books", 201, as: ada, json: ["contacts": [person("C", "D")]]).json?["id"]?
                    .stringValue)
            try await api.call(.GET, "/address-books/\(bareUUID(book))", 404, as: ada)
            try await api.call(.GET, "\(app)/address-books/\(bareUUID(usersBook))", 200, as: server)
            let read = try await api.call(.GET, "\(app)/address-books/\(bareUUID(book))", 200, as: server)
            let contacts = read.json?["contacts"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            try #require(contacts.count == 2)
            try await api.call(.GET, "\(app)/address-books/\(UUID().lowercased)", 404, as: server)
            try await api.call(.GET, "\(app)/address-books/\(bareUUID(book))/duplicates", 200, as: server)
            try await api.call(
                .POST, "\(app)/address-books/\(bareUUID(book))/consolidate", 200, as: server,
                json: ["keep": .string(bareUUID(contacts[0])), "merge": .string(contacts[1])])
            try await api.call(
                .POST, "\(app)/address-books/\(bareUUID(book))/consolidate", 404, as: server,
                json: ["keep": .string(contacts[0]), "merge": .string(contacts[1])])
            try await api.call(
                .POST, "\(app)/address-books", 201, as: server,
                body: ByteBuffer(string: "BEGIN:VCARD\nFN:Grace Hopper\nEND:VCARD\n"),
                contentType: "text/vcard")
            try await api.call(.POST, "\(app)/address-books", 422, as: server, json: ["contacts": 1])
        }
    }

    @Test("The app's settings of the service answer as documented")
    func settings() async throws {
        try await Self.withDocument { api in
            let server = try await api.backend()
            let path = "\(server.prefix)/names/settings"
            let initial = try await api.call(.GET, path, 200, as: server)
            #expect(initial.json?["default_region"] == "US")
            let set = try await api.call(.PUT, path, 200, as: server, json: ["default_region": "gb"])
            #expect(set.json?["default_region"] == "GB")
            #expect(try await api.call(.GET, path, 200, as: server).json?["default_region"] == "GB")
            try await api.call(.PUT, path, 422, as: server, json: [:])
            try await api.call(.PUT, path, 422, as: server, json: ["default_region": 44])
            try await api.call(.PUT, path, 422, as: server, json: ["default_region": "GB", "language": "en"])
            try await api.call(.PUT, path, 400, as: server, json: "GB")
            try await api.call(.PUT, path, 401, json: ["default_region": "GB"])
            try await api.call(.GET, path, 401)
            try await api.call(.GET, "/apps/not-an-app/names/settings", 404, as: server)
            try await api.call(.GET, path, 406, as: server, accept: nil)
        }
    }

    // MARK: Without the auth service

    @Test("Without the auth service, authenticated routes and readiness answer 503 as documented")
    func authServiceDown() async throws {
        // A client that gives up on a refused connection at once, instead of retrying it until
        // the deadline of each internal call.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        let impatient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            try await Self.orphanedNamesService(http: impatient)
        } catch {
            try? await impatient.shutdown()
            throw error
        }
        try await impatient.shutdown()
    }

    private static func orphanedNamesService(http impatient: HTTPClient) async throws {
        try await Self.withDocument { api in
            // A second names service whose auth service is nowhere (nothing listens on port 1).
            try await LiveServer.run(
                [NamesService.configured(NamesSettings(authURL: "http://127.0.0.1:1"))],
                settings: ServerSettings(internalToken: api.harness.fixture.internalToken), http: impatient
            ) { server in
                let orphan = TestClient(baseURL: server.baseURL, http: server.http)
                let alice = try await api.harness.user("alice")
                let backend = try await api.harness.server()
                for (method, path, headers) in [
                    (HTTPMethod.GET, "/resolve?address=system%3Aalice", alice.headers), (.GET, "/resolve", []),
                    (.GET, "\(backend.prefix)/names/settings", backend.headers),
                ] {
                    let response = try await orphan.request(method, path, headers: headers)
                    api.check(response, method.rawValue, path, 503)
                    #expect(response.errorID == "service_unavailable")
                }
                let ready = try await orphan.request(.GET, "/health/ready", accept: nil)
                api.check(ready, "GET", "/health/ready", 503)
                #expect(ready.json?["checks"]?["auth"] == "unavailable")
            }
        }
    }
}

extension NamesClient: Credentials {
    var auth: [(String, String)] { headers }
}
