import Foundation
import Hummingbird
import LayerModels
import LayerServer
import LayerTesting
import NIOCore
import Testing

/// How a JSON body that does not fit its type is refused: a 4xx that names the property.
@Suite struct JSONBodyTests {
    struct Settings: Decodable {
        var name: String?
        var ttl: Int?
        var weight: Double?
        var operations: [Operation]?
    }

    struct Operation: Decodable {
        var property: String
        var index: Int?
    }

    func refusal(_ body: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> ErrorBody {
        do {
            _ = try Request.decodeJSON(Settings.self, from: ByteBuffer(string: body))
        } catch let error as APIError {
            return error.body
        }
        throw FixtureError("\(body) was accepted")
    }

    // Foundation's decoder calls these "not valid JSON"; they are valid JSON with a number that
    // no integer takes (found by fuzzing with schemathesis).
    @Test func aNumberThatIsNoIntegerIsNamed() throws {
        for (body, property) in [
            (#"{"ttl": 2.5}"#, "ttl"),
            (#"{"ttl": 2.5890419884777833e-42, "name": "x"}"#, "ttl"),
            (#"{"ttl": 99999999999999999999}"#, "ttl"),
            (#"{"weight": 0.5, "operations": [{"property": "a"}, {"property": "b", "index": 1.5}]}"#, "operations.1.index"),
        ] {
            let error = try refusal(body)
            #expect(error.id == "invalid_property", "\(body)")
            #expect(error.data?["property"] == .string(property), "\(body): \(error.message)")
        }
        // A fraction where a fraction belongs is fine.
        #expect(try Request.decodeJSON(Settings.self, from: ByteBuffer(string: #"{"weight": 2.5}"#)).weight == 2.5)
    }

    @Test func aBodyThatIsNotJSONOrNullIsABadRequest() throws {
        #expect(try refusal(#"{"ttl": 2.5"#).message == "The request body is not valid JSON.")
        #expect(try refusal("nonsense").id == "invalid_request")
        let null = try refusal("null")
        #expect(null.id == "invalid_request" && null.message == "The request body must not be null.")
        #expect(try refusal(#"{"name": null, "operations": [null]}"#).data?["property"] == "operations.0")
    }

    // Some clients send `[]` for an empty object: well-formed JSON of the wrong kind is the body
    // at fault (422), not a request that could not be read (400).
    @Test func jsonOfTheWrongKindNamesTheBody() throws {
        for body in ["[]", "[1, 2]", #""text""#, "7", "true"] {
            let error = try refusal(body)
            #expect(error.id == "invalid_property", "\(body)")
            #expect(error.data?["property"] == "body", "\(body)")
        }
    }

    @Test func aValueDecodedApartIsNamedByItsFullPath() throws {
        let parts: JSONValue = [["property": "a"], ["property": 5], ["property": "c", "index": .number(0.5)]]
        for (value, property) in [
            (parts, "operations.2.parts.1.property"), (.array([["index": 1]]), "operations.2.parts.0.property"),
        ] {
            do {
                _ = try value.decode([Operation].self, property: "operations.2.parts")
                Issue.record("\(value) was accepted")
            } catch let error as APIError {
                #expect(error.body.data?["property"] == .string(property), "\(error.body.message)")
            }
        }
        let misfit = #expect(throws: APIError.self) {
            try JSONValue.array([["property": "c", "index": .number(0.5)]]).decode([Operation].self, property: "ops")
        }
        #expect(misfit?.body.data?["property"] == "ops.0.index")
    }
}
