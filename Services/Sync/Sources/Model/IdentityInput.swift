import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The identity fields an app's backend sets through the Server API (`POST`/`PUT` of
/// `/apps/:app/users/:user/identity`). An absent field is empty (`null`). The read-only fields
/// of an identity as `GET` answers it (`id`, `url`, `user_id`, `presence`) may come along, so that
/// a backend can send back what it read with some fields changed; `id` and `user_id` must then
/// name the user of the path.
struct IdentityInput: Decodable, Sendable {
    var displayName: String?
    var avatarURL: String?
    var firstName: String?
    var lastName: String?
    var phoneNumber: String?
    var emailAddress: String?
    var publicKey: String?
    var identityType: String?
    var metadata: [String: String]?
    var id: String?
    var userID: String?
    var url: JSONValue?
    var presence: JSONValue?

    enum CodingKeys: String, CodingKey, CaseIterable {
        case metadata, id, url, presence
        case userID = "user_id"
        case displayName = "display_name"
        case avatarURL = "avatar_url"
        case firstName = "first_name"
        case lastName = "last_name"
        case phoneNumber = "phone_number"
        case emailAddress = "email_address"
        case publicKey = "public_key"
        case identityType = "identity_type"
    }

    static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    /// The record these fields describe for `user`; `display_name` is required.
    func record(user: String) throws -> IdentityRecord {
        if let userID, userID != user {
            throw APIError.invalid("user_id", "user_id is read-only: it is the user of the path, '\(user)', if given.")
        }
        if let id, (try? IdentityReference.userID(id, property: "id")) != user || !id.hasPrefix("layer:///identities/") {
            throw APIError.invalid("id", "id is read-only: it is \(LayerID.identity(userID: user)), if given.")
        }
        guard let displayName else {
            throw APIError(.missingProperty, "An identity needs a display_name.", property: "display_name")
        }
        var record = IdentityRecord(userID: user)
        record.displayName = displayName
        record.avatarURL = avatarURL
        record.firstName = firstName
        record.lastName = lastName
        record.phoneNumber = phoneNumber
        record.emailAddress = emailAddress
        record.publicKey = publicKey
        record.identityType = identityType ?? "user"
        record.metadata = metadata ?? [:]
        try IdentityRules.validate(record)
        return record
    }
}

/// The limits of identity fields (after the original product's documented ones) and how a
/// Layer-Patch changes them.
enum IdentityRules {
    static let maxMetadataKeys = 16
    static let maxMetadataKeyLength = 128
    static let maxMetadataValueLength = 1024
    static let identityTypes: Set<String> = ["user", "bot"]

    /// The free-text fields: their property name, how to reach them, and their longest length.
    static let textFields: [(property: String, path: any WritableKeyPath<IdentityRecord, String?> & Sendable, maxLength: Int)] = [
        ("display_name", \.displayName, 128),
        ("avatar_url", \.avatarURL, 1024),
        ("first_name", \.firstName, 128),
        ("last_name", \.lastName, 128),
        ("phone_number", \.phoneNumber, 32),
        ("email_address", \.emailAddress, 255),
        ("public_key", \.publicKey, 8192),
    ]

    /// Checks every field of `record`; the error names the first offending one.
    static func validate(_ record: IdentityRecord) throws {
        for field in textFields {
            guard let value = record[keyPath: field.path] else { continue }
            try checkText(value, property: field.property, maxLength: field.maxLength)
        }
        if let name = record.displayName, name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw APIError.invalid("display_name", "display_name must not be empty.")
        }
        if let email = record.emailAddress, !email.isEmpty {
            let halves = email.split(separator: "@", omittingEmptySubsequences: false)
            guard halves.count >= 2, !halves[0].isEmpty, !halves[halves.count - 1].isEmpty else {
                throw APIError.invalid("email_address", "email_address is an e-mail address such as name@example.com.")
            }
        }
        guard identityTypes.contains(record.identityType) else {
            throw APIError.invalid("identity_type", "identity_type is 'user' or 'bot'.")
        }
        guard record.metadata.count <= maxMetadataKeys else {
            throw APIError.invalid("metadata", "An identity's metadata has at most \(maxMetadataKeys) keys.")
        }
        for (key, value) in record.metadata {
            guard (1...maxMetadataKeyLength).contains(key.count), !key.contains("\u{0}") else {
                throw APIError.invalid("metadata", "Metadata keys have 1 to \(maxMetadataKeyLength) characters and no NUL.")
            }
            try checkText(value, property: "metadata.\(key)", maxLength: maxMetadataValueLength)
        }
    }

    private static func checkText(_ value: String, property: String, maxLength: Int) throws {
        guard value.count <= maxLength else {
            throw APIError.invalid(property, "\(property) has at most \(maxLength) characters.")
        }
        guard !value.contains("\u{0}") else { throw APIError.invalid(property, "\(property) must not contain NUL.") }
    }

    /// Applies one Layer-Patch operation: `set` of a field (optional ones also to `null`),
    /// `delete` of an optional field, `set`/`delete` of `metadata` or of `metadata.<key>`.
    static func apply(_ operation: LayerPatchOperation, to record: inout IdentityRecord) throws {
        let property = operation.property
        let path = operation.path
        if path.first == "metadata" {
            try applyMetadata(operation, to: &record)
            return
        }
        guard path.count == 1 else { throw APIError.invalid(property, "'\(property)' is not a field of an identity.") }
        let value: JSONValue? =
            switch operation.operation {
            case .set: operation.value ?? .null
            case .delete: .null
            case .add, .remove:
                throw APIError.invalid(property, "Identity fields take 'set' and 'delete' operations.")
            }
        if property == "identity_type" {
            guard let text = value?.stringValue else { throw APIError.invalid(property, "identity_type is 'user' or 'bot'.") }
            record.identityType = text
            return
        }
        guard let field = textFields.first(where: { $0.property == property }) else {
            throw APIError.invalid(property, "'\(property)' is not a field of an identity that can be changed.")
        }
        switch value {
        case .string(let text)?:
            record[keyPath: field.path] = text
        case .null?, nil:
            guard property != "display_name" else {
                throw APIError.invalid(property, "display_name cannot be removed; set it to another name.")
            }
            record[keyPath: field.path] = nil
        default:
            throw APIError.invalid(property, "\(property) is a string.")
        }
    }

    private static func applyMetadata(_ operation: LayerPatchOperation, to record: inout IdentityRecord) throws {
        let property = operation.property
        let path = operation.path
        guard path.count <= 2, path.dropFirst().allSatisfy({ !$0.isEmpty }) else {
            throw APIError.invalid(property, "An identity's metadata is flat: patch 'metadata' or 'metadata.<key>'.")
        }
        switch (operation.operation, path.count) {
        case (.set, 1):
            switch operation.value ?? .null {
            case .null:
                record.metadata = [:]
            case .object(let object):
                var metadata: [String: String] = [:]
                for (key, value) in object {
                    guard let text = value.stringValue else {
                        throw APIError.invalid("metadata.\(key)", "Identity metadata values are strings.")
                    }
                    metadata[key] = text
                }
                record.metadata = metadata
            default:
                throw APIError.invalid(property, "metadata is an object of strings.")
            }
        case (.delete, 1):
            record.metadata = [:]
        case (.set, _):
            switch operation.value ?? .null {
            case .null: record.metadata[path[1]] = nil
            case .string(let text): record.metadata[path[1]] = text
            default: throw APIError.invalid(property, "Identity metadata values are strings.")
            }
        case (.delete, _):
            record.metadata[path[1]] = nil
        case (.add, _), (.remove, _):
            throw APIError.invalid(property, "metadata takes 'set' and 'delete' operations.")
        }
    }
}

/// Identities as the app's backend manages them, and the rule that the Server API acts only for
/// users who exist: those with an identity row (made by a session, by membership of a
/// conversation or announcement, or by the backend).
