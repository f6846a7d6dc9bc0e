import Foundation
import LayerModels
import LayerServer
import NameMatching

/// The JSON of a person as one caller may see it. The owner (the user who claimed the record)
/// sees everything, with the policy of each address; anyone else sees the names and the
/// addresses that are public, neither hidden nor removed.
enum PersonObject {
    static func render(_ person: PersonRepository.Person, ownership: PolicyRepository.Ownership?, viewer: Caller) -> JSONValue {
        let record = person.document.record
        let isOwner = ownership != nil && viewer.user == ownership?.owner
        var addresses: [JSONValue] = []
        for address in record.addresses {
            let policy = ownership?.policies[AddressKey(type: address.type, value: address.value)] ?? .init()
            var object: [String: JSONValue] = [
                "type": .string(address.type), "value": .string(address.value), "verified": .bool(address.verified),
            ]
            if isOwner {
                object["policy"] = .string(policy.policy)
                object["removed"] = .bool(policy.removed)
                object["hidden"] = .bool(policy.hidden)
            } else if policy.policy != "public" || policy.hidden || policy.removed {
                continue
            }
            addresses.append(.object(object))
        }
        var object: [String: JSONValue] = [
            "id": .string(LayerID(.persons, person.id).uri),
            "first_name": record.firstName.map(JSONValue.string) ?? .null,
            "last_name": record.lastName.map(JSONValue.string) ?? .null,
            "fn_metaphone": metaphone(record.firstName),
            "ln_metaphone": metaphone(record.lastName),
            "addresses": .array(addresses),
            "claimed": .bool(ownership != nil),
            "created_at": .string(LayerTimestamp.string(person.createdAt)),
            "updated_at": .string(LayerTimestamp.string(person.updatedAt)),
        ]
        if isOwner {
            object["gender"] = record.gender.map(JSONValue.string) ?? .null
            object["birthday"] = record.birthday.map(JSONValue.string) ?? .null
            object["location"] = record.location.map(JSONValue.string) ?? .null
            object["devices"] = .array(person.document.devices)
            object["barred_apps"] = .array((ownership?.barredApps ?? []).map { .string(LayerID(.apps, $0).uri) })
        }
        return .object(object)
    }

    /// A record as its submitter sent it, normalised (contacts of one's own address book, and
    /// the lists of `POST /persons/deduplicate`, which nobody else sees).
    static func render(_ document: PersonDocument, id: String?) -> JSONValue {
        let record = document.record
        return .object([
            "id": id.map(JSONValue.string) ?? .null,
            "first_name": record.firstName.map(JSONValue.string) ?? .null,
            "last_name": record.lastName.map(JSONValue.string) ?? .null,
            "fn_metaphone": metaphone(record.firstName),
            "ln_metaphone": metaphone(record.lastName),
            "addresses": .array(
                record.addresses.map {
                    ["type": .string($0.type), "value": .string($0.value), "verified": .bool($0.verified)]
                }),
            "gender": record.gender.map(JSONValue.string) ?? .null,
            "birthday": record.birthday.map(JSONValue.string) ?? .null,
            "location": record.location.map(JSONValue.string) ?? .null,
            "devices": .array(document.devices),
        ])
    }

    /// The primary and alternate Double Metaphone keys of a name; null without one.
    static func metaphone(_ name: String?) -> JSONValue {
        guard let name else { return .null }
        let keys = DoubleMetaphone.keys(name)
        return [.string(keys.primary), .string(keys.alternate)]
    }
}

/// A likely duplicate pair in the API's shape.
enum MatchObject {
    static func render(id: UUID, members: [String], probability: Double, evidence: [String: String], kind: String = "persons")
        -> JSONValue
    {
        .object([
            "id": .string(LayerID(.matches, id).uri),
            kind: .array(members.map(JSONValue.string)),
            "probability": .number((probability * 10_000).rounded() / 10_000),
            "evidence": .object(evidence.mapValues(JSONValue.string)),
        ])
    }
}
