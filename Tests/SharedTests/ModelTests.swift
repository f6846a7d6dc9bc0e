import Foundation
import LayerModels
import Testing

@Suite struct LayerIDTests {
    let uuid = UUID(uuidString: "0E9A6A8B-7C35-4B0F-9B1B-1F4B0A9F2C11")!

    @Test func parsesTheFullURIAndTheBareUUID() {
        #expect(LayerID(parsing: "layer:///conversations/0e9a6a8b-7c35-4b0f-9b1b-1f4b0a9f2c11", as: .conversations)?.uuid == uuid)
        #expect(LayerID(parsing: "0E9A6A8B-7C35-4B0F-9B1B-1F4B0A9F2C11", as: .messages)?.uuid == uuid)
        #expect(LayerID(.keys, uuid).uri == "layer:///keys/0e9a6a8b-7c35-4b0f-9b1b-1f4b0a9f2c11")
    }

    @Test func appIDsMayNameTheirEnvironment() {
        for form in ["layer:///apps/production/", "layer:///apps/staging/", "layer:///apps/", ""] {
            #expect(LayerID(parsing: form + uuid.uuidString, as: .apps)?.uuid == uuid)
        }
        #expect(LayerID(parsing: "layer:///conversations/production/\(uuid.uuidString)", as: .conversations) == nil)
    }

    @Test func refusesAnotherCollectionAndGarbage() {
        #expect(LayerID(parsing: "layer:///messages/\(uuid.uuidString)", as: .conversations) == nil)
        #expect(LayerID(parsing: "layer:///keys/not-a-uuid", as: .keys) == nil)
        #expect(LayerID(parsing: "", as: .keys) == nil)
    }

    @Test func idsAreWrittenInLowerCase() {
        let fixed = UUID(uuidString: "0A1B2C3D-4E5F-6071-8293-A4B5C6D7E8F9")!
        #expect(fixed.lowercased == "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")
        #expect(LayerID(.messages, fixed).uri == "layer:///messages/0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")
        for _ in 0..<1000 {
            let id = UUID()
            #expect(id.lowercased == id.uuidString.lowercased())
            #expect(UUID(text: id.lowercased) == id)
            #expect(UUID(text: id.uuidString) == id)
        }
        for bad in [
            "", "0a1b2c3d4e5f607182", "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8fg", "0a1b2c3d-4e5f-6071-8293a-4b5c6d7e8f9",
            "0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9a",
        ] {
            #expect(UUID(text: bad) == nil, "\(bad)")
        }
    }

    @Test func identityIDsEncodeTheUserID() {
        #expect(LayerID.identity(userID: "namespace/12345") == "layer:///identities/namespace%2F12345")
        #expect(LayerID.identity(userID: "alice") == "layer:///identities/alice")
    }
}

@Suite struct LayerPatchTests {
    @Test func splitsDottedPaths() {
        #expect(LayerPatchOperation(operation: .set, property: "metadata.a.b").path == ["metadata", "a", "b"])
        #expect(LayerPatchOperation(operation: .set, property: "participants").path == ["participants"])
    }

    @Test func understandsBothWaysOfWritingALiteralDot() {
        #expect(
            LayerPatchOperation(operation: .set, property: "recipient_status.fred..flinstone").path
                == ["recipient_status", "fred.flinstone"])
        #expect(
            LayerPatchOperation(operation: .set, property: #"recipient_status.fred\.flinstone"#).path
                == ["recipient_status", "fred.flinstone"])
    }

    @Test func decodesOperations() throws {
        let json =
            #"[{"operation":"add","property":"participants","id":"layer:///identities/a"},{"operation":"set","property":"metadata.x","value":{"y":"z"}}]"#
        let operations = try JSONDecoder().decode([LayerPatchOperation].self, from: Data(json.utf8))
        #expect(operations[0].operation == .add && operations[0].id == "layer:///identities/a")
        #expect(operations[1].value == ["y": "z"])
    }
}

@Suite struct ErrorBodyTests {
    @Test func codesAndStatusesFollowTheReferenceTable() {
        let expected: [(ErrorID, Int, Int)] = [
            (.authenticationRequired, 4, 401), (.invalidAppID, 2, 403), (.userSuspended, 6, 403),
            (.rateLimitExceeded, 7, 429), (.invalidRequest, 10, 400), (.accessDenied, 101, 403), (.notFound, 102, 404),
            (.missingProperty, 104, 422), (.invalidProperty, 105, 422), (.invalidEndpoint, 106, 404),
            (.invalidHeader, 107, 406), (.conflict, 108, 409), (.methodNotAllowed, 109, 405), (.idInUse, 111, 409),
        ]
        for (id, code, status) in expected {
            #expect(id.code == code, "\(id)")
            #expect(id.status == status, "\(id)")
        }
    }

    @Test func encodesEveryField() throws {
        let body = ErrorBody(.missingProperty, message: "m", data: ["property": "app_id"])
        let object = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(body))
        #expect(object["id"] == "missing_property")
        #expect(object["code"] == 104)
        #expect(object["url"]?.stringValue?.isEmpty == false)
        #expect(object["data"]?["property"] == "app_id")
    }
}
