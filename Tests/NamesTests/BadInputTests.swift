import Foundation
import LayerModels
import LayerTesting
import NIOCore
import Testing

@testable import LayerNames

/// Every way a request of records can be wrong: a 4xx that names the record and the field, and
/// nothing stored.
@Suite struct BadInputTests {
    /// Posts `persons` and checks the answer is 422 naming `property` of record `index`; then
    /// checks that nothing of the request was stored (the valid record's address resolves to
    /// nobody).
    func refuses(
        _ persons: [JSONValue], index: Int, property: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        try await NamesHarness.run { names in
            let server = try await names.server()
            let valid = person("Valid", "Record", [("email", "valid@example.com")])
            let response = try await server.post("/persons", ["persons": .array([valid] + persons)])
            #expect(response.status == 422, "\(response.text)", sourceLocation: sourceLocation)
            let errors = response.json?["data"]?["errors"]?.arrayValue ?? []
            let named = errors.contains { $0["index"]?.intValue == index + 1 && $0["property"]?.stringValue == property }
            #expect(named, "record \(index + 1), \(property) in \(errors)", sourceLocation: sourceLocation)
            #expect(
                try await server.resolve("email:valid@example.com").status == 404, "nothing was stored",
                sourceLocation: sourceLocation)
        }
    }

    @Test func anInvalidPhoneNumber() async throws {
        try await refuses([person("Ann", nil, [("phone", "12")])], index: 0, property: "addresses[0].value")
        try await refuses([person("Ann", nil, [("phone", "call me maybe")])], index: 0, property: "addresses[0].value")
    }

    @Test func aMalformedEmail() async throws {
        try await refuses([person("Ann", nil, [("email", "ann at example")])], index: 0, property: "addresses[0].value")
    }

    @Test func anAddressTypeThatIsNotALowerCaseWord() async throws {
        try await refuses([person("Ann", nil, [("E-Mail", "ann@example.com")])], index: 0, property: "addresses[0].type")
        try await refuses([person("Ann", nil, [("", "x")])], index: 0, property: "addresses[0].type")
    }

    @Test func anUnknownField() async throws {
        try await refuses([["first_name": "Ann", "nickname": "Annie"]], index: 0, property: "nickname")
    }

    @Test func anEmptyAddressValue() async throws {
        try await refuses([person("Ann", nil, [("system", "")])], index: 0, property: "addresses[0].value")
        try await refuses([person("Ann", nil, [("twitter", " @ ")])], index: 0, property: "addresses[0].value")
    }

    @Test func anEmptyPerson() async throws {
        try await refuses([[:]], index: 0, property: "")
        try await refuses([["first_name": "   ", "addresses": []]], index: 0, property: "")
    }

    @Test func aBirthdayThatIsNotADate() async throws {
        try await refuses([person("Ann", "Lee", birthday: "soon")], index: 0, property: "birthday")
        try await refuses([person("Ann", "Lee", birthday: "1980-1-2")], index: 0, property: "birthday")
        try await refuses([person("Ann", "Lee", birthday: "12/05/1980")], index: 0, property: "birthday")
        try await refuses([person("Ann", "Lee", birthday: "2000-+1-+1")], index: 0, property: "birthday")
        try await refuses([person("Ann", "Lee", birthday: "--+1-+1")], index: 0, property: "birthday")
    }

    @Test func birthdaysAreReadInTheirCommonForms() async throws {
        try await NamesHarness.run { names in
            let persons =
                try await names.server().add([
                    person("A", "B", [("system", "ab")], birthday: "19800412"),
                    person("C", "D", [("system", "cd")], birthday: "1980/04/12"),
                    person("E", "F", [("system", "ef")], birthday: "1981-02-30"),
                    // Typos of real data: the valid part is kept, the record is not refused.
                    person("G", "H", [("system", "gh")], birthday: "19371233"),
                    person("I", "J", [("system", "ij")], birthday: "1972-95-18"),
                ])["persons"]?.arrayValue ?? []
            #expect(persons.count == 5)
            // Only the owner sees a birthday: what is stored is checked on the reader itself.
            #expect(
                ["19800412", "1980/04/12", "1981-02-30", "19371233", "1972-95-18"].map(PersonReader.birthday)
                    == ["1980-04-12", "1980-04-12", "1981-02-30", "1937-12", "1972"])
        }
    }

    @Test func namesInAnyScriptAreAccepted() async throws {
        try await NamesHarness.run { names in
            let added = try await names.server().add([
                person("Владимир", "Набоков", [("email", "vn@example.ru")]),
                person("明", "王", [("email", "ming@example.cn")]),
                person("محمد", "علي", [("email", "mali@example.eg")]),
                person("Zoë", "Ørsted-Åberg", [("email", "zoe@example.dk")]),
            ])
            let persons = try #require(added["persons"]?.arrayValue)
            #expect(persons.map { $0["last_name"]?.stringValue } == ["Набоков", "王", "علي", "Ørsted-Åberg"])
        }
    }

    @Test func tooManyRecordsIsRefusedWhole() async throws {
        try await NamesHarness.run { names in
            let user = try await names.user("bulk")
            let many = (0...1000).map { person("P\($0)", "Q", [("email", "p\($0)@example.com")]) }
            let response = try await user.post("/persons", ["persons": .array(many)])
            #expect(response.status == 413 && response.errorID == "request_too_large", "\(response.status)")
            #expect(try await user.resolve("email:p0@example.com").status == 404)
        }
    }

    @Test func malformedBodiesAndQueries() async throws {
        try await NamesHarness.run { names in
            let user = try await names.user("ann")
            let notJSON = try await user.client.request(
                .POST, "/persons", headers: user.headers, body: ByteBuffer(string: "{persons"), contentType: "application/json")
            #expect(notJSON.status == 400)
            #expect(try await user.post("/persons", ["persons": "nope"]).status == 422)
            #expect(try await user.post("/persons", ["people": []]).errorProperty == "people")
            #expect(try await user.post("/persons", [:]).status == 422)
            #expect(try await user.get("/resolve").errorProperty == "address")
            #expect(try await user.get("/resolve?address=nocolon").errorProperty == "address")
            #expect(try await user.get("/resolve?address=phone:abc").errorProperty == "address")
            #expect(try await user.get("/persons/not-a-person").status == 404)
            let server = try await names.server()
            #expect(try await server.get("/persons/duplicates?min_probability=2").errorProperty == "min_probability")
            #expect(try await server.get("/persons/duplicates?page_size=0").errorProperty == "page_size")
            #expect(try await server.get("/persons/duplicates?from_id=xyz").errorProperty == "from_id")
        }
    }
}
