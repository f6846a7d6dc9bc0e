import Foundation
import LayerModels
import LayerServer
import NameMatching

/// A person of tier 2 as stored: the record merged from its entries, and its devices.
struct PersonDocument: Codable, Sendable, Equatable {
    var record: PersonRecord
    var devices: [JSONValue]

    /// Merges the normalised entries of one person, oldest first: the newest entry that has a
    /// field gives it, addresses are the union (verified if any entry verified one), and devices
    /// are the union in order.
    static func merged(_ entries: [PersonDocument]) -> PersonDocument {
        var merged = PersonDocument(record: PersonRecord(), devices: [])
        for entry in entries {
            let record = entry.record
            if record.firstName != nil || record.lastName != nil {
                merged.record.firstName = record.firstName
                merged.record.lastName = record.lastName
            }
            merged.record.birthday = record.birthday ?? merged.record.birthday
            merged.record.location = record.location ?? merged.record.location
            merged.record.gender = record.gender ?? merged.record.gender
            for address in record.addresses {
                if let index = merged.record.addresses.firstIndex(where: { $0.type == address.type && $0.value == address.value })
                {
                    merged.record.addresses[index].verified = merged.record.addresses[index].verified || address.verified
                } else {
                    merged.record.addresses.append(address)
                }
            }
            for device in entry.devices where !merged.devices.contains(device) { merged.devices.append(device) }
        }
        return merged
    }

    /// The user ids of the app whose `system` addresses this person holds.
    var systemUsers: [String] { record.addresses.filter { $0.type == "system" }.map(\.value) }
}

/// An address written as `<type>:<value>` (in paths, queries and bodies).
struct AddressKey: Hashable, Sendable, CustomStringConvertible {
    var type: String
    var value: String
    var description: String { "\(type):\(value)" }

    /// Parses and normalises `text`; 422 naming `property` when it is not an address.
    static func parse(_ text: String, property: String, defaultRegion: String) throws -> AddressKey {
        guard let colon = text.firstIndex(of: ":") else {
            throw APIError.invalid(property, "\(property) is written <type>:<value>, such as email:ada@example.com.")
        }
        let type = String(text[..<colon])
        guard AddressNormalizer.isValidType(type) else {
            throw APIError.invalid(
                property, "'\(type)' is not an address type: a type is a lower-case word such as email or phone.")
        }
        do throws(NormalizationError) {
            let value = try AddressNormalizer.normalize(
                type: type, value: String(text[text.index(after: colon)...]), defaultRegion: defaultRegion)
            return AddressKey(type: type, value: value)
        } catch {
            throw APIError.invalid(property, error.reason)
        }
    }
}
