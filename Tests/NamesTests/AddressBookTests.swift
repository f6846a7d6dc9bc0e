import Foundation
import LayerModels
import LayerTesting
import NIOCore
import Testing

/// Address books: import (JSON and vCard), duplicates inside a book, consolidation, and the
/// deduplication across the books of many users that the patent describes.
@Suite struct AddressBookTests {
    static func book(_ client: NamesClient, _ contacts: [JSONValue]) async throws -> (id: String, contacts: [String]) {
        let response = try await client.post("/address-books", ["contacts": .array(contacts)])
        guard response.status == 201, let json = response.json, let id = json["id"]?.stringValue else {
            throw FixtureError("POST /address-books answered \(response.status): \(response.text)")
        }
        return (id, json["contacts"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
    }

    static func duplicates(_ client: NamesClient, _ book: String) async throws -> [JSONValue] {
        let response = try await client.get("/address-books/\(bareUUID(book))/duplicates")
        guard response.status == 200, let matches = response.json?["matches"]?.arrayValue else {
            throw FixtureError("duplicates answered \(response.status): \(response.text)")
        }
        return matches
    }

    static func pairs(_ matches: [JSONValue]) -> [Set<String>] {
        matches.map { Set($0["contacts"]?.arrayValue?.compactMap(\.stringValue) ?? []) }
    }

    /// AB1 has A = a, b, c; AB2 has A = a; AB3 has A = a, b and B = c. From the books of the
    /// others, A and B of AB3 are one entity, and a, b and c resolve to one person.
    @Test func overlappingBooksOfManyUsersShowTwoContactsOfOneBookAreOnePerson() async throws {
        try await NamesHarness.run { names in
            let (a, b, c) = (("email", "a@example.com"), ("phone", "+14155550101"), ("twitter", "c_handle"))
            let one = try await names.user("one")
            let two = try await names.user("two")
            let three = try await names.user("three")
            _ = try await Self.book(one, [person("Alex", "Moss", [a, b, c])])
            _ = try await Self.book(two, [person("Alex", nil, [a])])
            let ab3 = try await Self.book(three, [person("Alex", "M", [a, b]), person("Lexi", nil, [c])])

            let matches = try await Self.duplicates(three, ab3.id)
            #expect(Self.pairs(matches).contains(Set(ab3.contacts)), "A and B of AB3 are one entity: \(matches)")
            let pair = matches.first { Set($0["contacts"]?.arrayValue?.compactMap(\.stringValue) ?? []) == Set(ab3.contacts) }
            #expect((pair?["probability"]?.numberValue ?? 0) >= 0.9)

            let resolved = try await [a, b, c].asyncMap { try await three.resolve("\($0.0):\($0.1)").person }
            #expect(resolved[0] != nil && Set(resolved).count == 1, "a, b and c resolve to one person: \(resolved)")
        }
    }

    /// A user's book holds Charlie Smith with a mobile number, and a second record with only
    /// CSMITH@DOMAIN.COM. The app knows a person with both: the two records are reported as one,
    /// and consolidating them keeps the first with the e-mail added.
    @Test func charlieSmithIsConsolidatedThroughTheStore() async throws {
        try await NamesHarness.run { names in
            _ = try await names.server().addOne(
                person("Charlie", "Smith", [("system", "charlie"), ("email", "csmith@domain.com"), ("phone", "+14155550123")]))
            let user = try await names.user("dana")
            let book = try await Self.book(
                user,
                [
                    person("Charlie", "Smith", [("physical", "1 Main St, Springfield"), ("phone", "(415) 555-0123")]),
                    person(nil, nil, [("email", "CSMITH@DOMAIN.COM")]),
                ])
            let matches = try await Self.duplicates(user, book.id)
            #expect(Self.pairs(matches).contains(Set(book.contacts)), "\(matches)")

            let merged = try await user.post(
                "/address-books/\(bareUUID(book.id))/consolidate",
                ["keep": .string(book.contacts[0]), "merge": .string(book.contacts[1])])
            #expect(merged.status == 200, "\(merged.text)")
            #expect(merged.json?["id"]?.stringValue == book.contacts[0] && merged.json?["first_name"] == "Charlie")
            let values = Set(merged.json?["addresses"]?.arrayValue?.compactMap { $0["value"]?.stringValue } ?? [])
            #expect(values == ["1 Main St, Springfield", "+14155550123", "csmith@domain.com"], "\(values)")
            let after = try await user.get("/address-books/\(bareUUID(book.id))")
            #expect(after.json?["contacts"]?.arrayValue?.count == 1, "the merged record left the book")
            #expect(try await Self.duplicates(user, book.id).isEmpty)
            let again = try await user.post(
                "/address-books/\(bareUUID(book.id))/consolidate",
                ["keep": .string(book.contacts[0]), "merge": .string(book.contacts[1])])
            #expect(again.status == 404 && again.errorProperty == "merge")
        }
    }

    @Test func identicalContactsComeFirstWithCertainty() async throws {
        try await NamesHarness.run { names in
            let user = try await names.user("erin")
            let book = try await Self.book(
                user,
                [
                    person("Frank", "Ocean", [("email", "frank@example.com")]),
                    person("Gina", "Tonic", [("email", "gina@example.com")]),
                    person("Frank", "Ocean", [("email", "frank@example.com")]),
                ])
            let matches = try await Self.duplicates(user, book.id)
            #expect(
                matches.first.map { Set($0["contacts"]?.arrayValue?.compactMap(\.stringValue) ?? []) } == [
                    book.contacts[0], book.contacts[2],
                ])
            #expect(matches.first?["probability"]?.numberValue == 1)
        }
    }

    @Test func aBookIsItsOwnersAlone() async throws {
        try await NamesHarness.run { names in
            let owner = try await names.user("owner")
            let book = try await Self.book(owner, [person("Hal", "Jordan", [("email", "hal@example.com")])])
            let other = try await names.user("other")
            #expect(try await other.get("/address-books/\(bareUUID(book.id))/duplicates").status == 404)
            #expect(try await other.get("/address-books/\(bareUUID(book.id))").status == 404)
            #expect(
                try await names.server().get("/address-books/\(bareUUID(book.id))").status == 200, "the app's backend reads it")
        }
    }

    @Test func vCardsAsPhonesExportThemAreImported() async throws {
        try await NamesHarness.run { names in
            let user = try await names.user("ivy")
            let vcard = """
                BEGIN:VCARD\r
                VERSION:3.0\r
                N:Gauß;Carl Friedrich;;;\r
                FN:Carl Friedrich Gauß\r
                item1.EMAIL;TYPE=INTERNET,pref:carl@example.de\r
                TEL;TYPE=CELL:+49 30 1234567\r
                ADR;TYPE=HOME:;;Bahnhofstr. 1;Göttingen;;37073;Germany\r
                BDAY:17770430\r
                X-TWITTER:@cfgauss\r
                NOTE:a long note that is\r
                  folded onto a second line\r
                END:VCARD\r
                BEGIN:VCARD\r
                VERSION:4.0\r
                FN:Émilie du Châtelet\r
                TEL;VALUE=uri;TYPE="voice,cell":tel:+33-1-23-45-67-89\r
                GENDER:F\r
                BDAY:--1217\r
                END:VCARD\r

                """
            let response = try await user.client.request(
                .POST, "/address-books", headers: user.headers, body: ByteBuffer(string: vcard), contentType: "text/vcard")
            #expect(response.status == 201, "\(response.text)")
            let contacts = try #require(response.json?["contacts"]?.arrayValue)
            #expect(contacts.count == 2)
            #expect(contacts[0]["first_name"] == "Carl Friedrich" && contacts[0]["last_name"] == "Gauß")
            #expect(contacts[0]["birthday"] == "1777-04-30")
            let types = contacts[0]["addresses"]?.arrayValue?.compactMap { $0["type"]?.stringValue }
            #expect(types == ["email", "phone", "physical", "twitter"], "\(types ?? [])")
            #expect(contacts[1]["first_name"] == "Émilie du" || contacts[1]["last_name"] == "Châtelet")
            #expect(contacts[1]["gender"] == "f" && contacts[1]["birthday"] == "--12-17")

            let broken = try await user.client.request(
                .POST, "/address-books", headers: user.headers, body: ByteBuffer(string: "BEGIN:VCARD\r\nFN:Nobody\r\n"),
                contentType: "text/vcard")
            #expect(broken.status == 422, "\(broken.text)")
            #expect(broken.json?["data"]?["errors"]?.arrayValue?.isEmpty == false)
            // A social profile without a service is skipped, not a crash.
            for line in ["X-SOCIALPROFILE;TYPE=:x", "IMPP;X-SERVICE-TYPE=:x", "IMPP;TYPE=:"] {
                let odd = try await user.client.request(
                    .POST, "/address-books", headers: user.headers,
                    body: ByteBuffer(string: "BEGIN:VCARD\nFN:A\n\(line)\nEND:VCARD\n"), contentType: "text/vcard")
                #expect(odd.status == 201, "\(line): \(odd.text)")
            }
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
