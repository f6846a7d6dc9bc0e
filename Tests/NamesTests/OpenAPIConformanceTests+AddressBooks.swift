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
            try await api.call(.POST, "/address-books", 422, as: alice, json: ["contacts"])
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
            try await api.call(.POST, "\(path)/consolidate", 422, as: alice, json: [])
            #expect(try await api.call(.GET, path, 200, as: alice).json?["contacts"]?.arrayValue?.count == 2)
        }
    }
}
