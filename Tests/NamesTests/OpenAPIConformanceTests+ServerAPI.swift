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
            try await api.call(.POST, "\(app)/persons", 422, as: server, json: 1)
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
                .POST, "\(app)/route", 404, as: server, json: ["address": "system:ada", "app_id": .string(elsewhere)])

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
            try await api.call(.PUT, path, 422, as: server, json: "GB")
            try await api.call(.PUT, path, 401, json: ["default_region": "GB"])
            try await api.call(.GET, path, 401)
            try await api.call(.GET, "/apps/not-an-app/names/settings", 404, as: server)
            try await api.call(.GET, path, 406, as: server, accept: nil)
        }
    }
}
