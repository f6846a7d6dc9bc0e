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
    /// are the union in order. Linear in the size of the entries.
    static func merged(_ entries: [PersonDocument]) -> PersonDocument {
        var merged = PersonDocument(record: PersonRecord(), devices: [])
        var positions: [AddressKey: Int] = [:]
        var devices = Set<JSONValue>()
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
                let key = AddressKey(address)
                if let index = positions[key] {
                    merged.record.addresses[index].verified = merged.record.addresses[index].verified || address.verified
                } else {
                    positions[key] = merged.record.addresses.count
                    merged.record.addresses.append(address)
                }
            }
            for device in entry.devices where devices.insert(device).inserted { merged.devices.append(device) }
        }
        return merged
    }

    /// The entry as far as its submitter can vouch for it (`nil`: the app's backend, which
    /// vouches for all of it). A user's word never makes an address verified, and a `system`
    /// address is theirs only for their own user id (new entries with another are refused; this
    /// keeps entries stored before that rule from speaking for anyone).
    func vouched(by submitter: String?) -> PersonDocument {
        guard let submitter else { return self }
        var document = self
        document.record.addresses = record.addresses.compactMap { address in
            guard address.type != "system" || address.value == submitter else { return nil }
            var address = address
            address.verified = false
            return address
        }
        return document
    }

    /// The user ids of the app whose `system` addresses this person holds.
    var systemUsers: [String] { record.addresses.filter { $0.type == "system" }.map(\.value) }
}

/// An address written as `<type>:<value>` (in paths, queries and bodies).
struct AddressKey: Hashable, Sendable, CustomStringConvertible {
    var type: String
    var value: String
    var description: String { "\(type):\(value)" }

    init(type: String, value: String) {
        self.type = type
        self.value = value
    }

    init(_ address: MatchAddress) { self.init(type: address.type, value: address.value) }

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
        let raw = String(text[text.index(after: colon)...])
        guard raw.utf8.count <= PersonReader.maxValueBytes else {
            throw APIError.invalid(property, "An address value is at most \(PersonReader.maxValueBytes) bytes.")
        }
        do throws(NormalizationError) {
            let value = try AddressNormalizer.normalize(type: type, value: raw, defaultRegion: defaultRegion)
            return AddressKey(type: type, value: value)
        } catch {
            throw APIError.invalid(property, error.reason)
        }
    }
}
