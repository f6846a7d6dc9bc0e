import Foundation
import LayerModels
import LayerTesting

extension UserClient {
    /// Creates a channel over REST and returns its id (the full URI); fails the test unless 201.
    func channel(_ name: String, members: [String] = [], metadata: JSONValue? = nil, id: String? = nil) async throws -> String {
        try createdID(
            try await post("/channels", channelBody(name, members: members, metadata: metadata, id: id)), of: "POST /channels")
    }

    /// Joins (or, for another user, adds them to) a channel.
    func join(_ channel: String, user: String? = nil) async throws -> TestResponse {
        try await put("/\(path(channel))/members/\(user ?? id)")
    }

    func leave(_ channel: String, user: String? = nil) async throws -> TestResponse {
        try await delete("/\(path(channel))/members/\(user ?? id)")
    }
}

/// The body that creates a channel whose members are named by their identity ids.
func channelBody(_ name: String, members: [String], metadata: JSONValue? = nil, id: String? = nil) -> JSONValue {
    var body: [String: JSONValue] = [
        "name": .string(name), "members": .array(members.map { .string(LayerID.identity(userID: $0)) }),
    ]
    if let metadata { body["metadata"] = metadata }
    if let id { body["id"] = .string(id) }
    return .object(body)
}

/// The user ids of a members list.
func memberIDs(_ response: TestResponse) -> [String] {
    response.json?.arrayValue?.compactMap { $0["identity"]?["user_id"]?.stringValue } ?? []
}
