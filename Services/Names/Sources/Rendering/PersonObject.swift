import Foundation
import LayerModels
import LayerServer
import NameMatching

/// The JSON of a person as one caller may see it. The owner (the user who claimed the record
/// first) sees everything, with the policy of each address; anyone else sees the names and only
/// the addresses they stated themselves that are public, neither hidden nor removed (they reach
/// the others through `/resolve` and `/route`, one address at a time, under policy).
enum PersonObject {
    static func isOwner(_ ownership: PolicyRepository.Ownership?, _ viewer: Caller) -> Bool {
        ownership != nil && viewer.user == ownership?.owner
    }

    /// The addresses of `person` that `viewer` may see.
    static func visibleAddresses(
        _ person: PersonRepository.Person, ownership: PolicyRepository.Ownership?, viewer: Caller
    ) -> [MatchAddress] {
        let addresses = person.document.record.addresses
        guard !isOwner(ownership, viewer) else { return addresses }
        return addresses.filter { address in
            let key = AddressKey(address)
            let policy = ownership?.policies[key] ?? .init()
            return policy.policy == "public" && !policy.hidden && !policy.removed
                && person.sources[key]?.includes(viewer) == true
        }
    }

    /// What `viewer` may see of `person`, as the matcher reads records: everything for the owner,
    /// the names and the visible addresses for anyone else.
    static func visibleRecord(
        _ person: PersonRepository.Person, ownership: PolicyRepository.Ownership?, viewer: Caller
    ) -> PersonRecord {
        let record = person.document.record
        guard !isOwner(ownership, viewer) else { return record }
        return PersonRecord(
            firstName: record.firstName, lastName: record.lastName,
            addresses: visibleAddresses(person, ownership: ownership, viewer: viewer))
    }

    static func render(_ person: PersonRepository.Person, ownership: PolicyRepository.Ownership?, viewer: Caller) -> JSONValue {
        let record = person.document.record
        let isOwner = isOwner(ownership, viewer)
        let addresses: [JSONValue] = visibleAddresses(person, ownership: ownership, viewer: viewer).map { address in
            var object: [String: JSONValue] = [
                "type": .string(address.type), "value": .string(address.value), "verified": .bool(address.verified),
            ]
            if isOwner {
                let policy = ownership?.policies[AddressKey(address)] ?? .init()
                object["policy"] = .string(policy.policy)
                object["removed"] = .bool(policy.removed)
                object["hidden"] = .bool(policy.hidden)
            }
            return .object(object)
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

extension PersonObject {
    /// An entry of a person as its owner sees it: the record as stated, and who stated it:
    /// `app` (the app's backend), `self` (a user about themselves) or `contact` (a user's
    /// address book); `yours` when the owner stated it. Which other user it was is not said.
    static func render(entry: PersonRepository.PersonEntry, owner: String) -> JSONValue {
        guard case .object(var object) = render(entry.document, id: LayerID(.entries, entry.id).uri) else { return .null }
        object["source"] = .string(entry.submitter == nil ? "app" : entry.fromContact ? "contact" : "self")
        object["yours"] = .bool(entry.submitter == owner)
        object["created_at"] = .string(LayerTimestamp.string(entry.createdAt))
        return .object(object)
    }
}
