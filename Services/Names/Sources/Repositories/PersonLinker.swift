import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching
import PostgresNIO

/// Computes tier 2 and tier 3 for entries already in tier 1: which person each entry belongs to,
/// the merged person, its addresses and blocking keys, and its likely duplicates. Adding records
/// and recomputing the whole store both go through here, so both give the same answers.
///
/// Entries join one person when they share an address that names one person: a `system`
/// address (the app's user id), an address verified on both sides, or, between address-book
/// contacts, any address other than a physical one (contacts are people's own statements of
/// whose an address is, which is what global deduplication across books builds on). A person's
/// id is the id of its oldest entry. Records that are only alike are not joined: they are
/// reported as matches with a probability.
struct PersonLinker: Sendable {
    /// An entry of tier 1, normalised and reduced to what its submitter can vouch for
    /// (``PersonDocument/vouched(by:)``).
    struct Entry: Sendable {
        var id: UUID
        var seq: Int64
        var fromContact: Bool
        /// Who sent it: a user, or nil for the app's backend.
        var submitter: String?
        /// Taken out of its person by the person's owner: it links to nothing.
        var detached = false
        var document: PersonDocument
    }

    /// The most one person may hold. Every write to a person merges it again from all of its
    /// entries, so these bound the work of each write.
    static let maxEntries = 1_000
    static let maxAddresses = 500
    static let maxDevices = 100

    /// A write would grow a person beyond one of the limits above; `index` is the first entry of
    /// the write that joins that person.
    struct LimitExceeded: Error {
        var index: Int
        var what: String
        var limit: Int
    }

    /// Matches below this probability are not kept.
    static let keptProbability = 0.2
    /// A blocking key shared by more persons than this finds no candidates (a very common name
    /// would make every import compare against thousands); the other keys still do.
    static let largestBlock = 500

    let deduplicator: Deduplicator
    /// Stored persons' features, decoded once for all the imports that meet them as candidates.
    let featureCache = FeatureCache()

    /// An entry of a person as merging needs it.
    typealias StoredEntry = (seq: Int64, contact: Bool, submitter: String?, detached: Bool, document: PersonDocument)

    /// Links `entries` (already inserted in tier 1) into persons; the person of each entry.
    func link(app: UUID, _ entries: [Entry], _ connection: PostgresConnection, _ logger: Logger) async throws -> [UUID] {
        guard !entries.isEmpty else { return [] }
        // 1. Existing persons that hold a linking address of a new entry.
        var types: [String] = []
        var values: [String] = []
        for entry in entries where !entry.detached {
            for address in entry.document.record.addresses where Self.mayLink(address, fromContact: entry.fromContact) {
                types.append(address.type)
                values.append(address.value)
            }
        }
        struct Holder {
            var person: UUID
            var verified: Bool
            var contactSources: Int32
        }
        var holders: [AddressKey: [Holder]] = [:]
        if !types.isEmpty {
            let rows = try await connection.query(
                """
                SELECT a.type, a.value, a.person_id, a.verified, a.contact_sources FROM names.addresses a
                JOIN unnest(\(types)::text[], \(values)::text[]) AS k(type, value) ON a.type = k.type AND a.value = k.value
                JOIN names.persons p ON p.app_id = a.app_id AND p.id = a.person_id AND NOT p.isolated
                WHERE a.app_id = \(app)
                """, logger: logger)
            for try await (type, value, person, verified, contactSources) in rows.decode((String, String, UUID, Bool, Int32).self)
            {
                holders[AddressKey(type: type, value: value), default: []].append(
                    Holder(person: person, verified: verified, contactSources: contactSources))
            }
        }

        // 2. Components of new entries and the existing persons they reach.
        var existing: [UUID: Int] = [:]
        var nodes = UnionFind(count: entries.count)
        var firstHolder: [AddressKey: (node: Int, verified: Bool, contact: Bool)] = [:]
        for (index, entry) in entries.enumerated() where !entry.detached {
            for address in entry.document.record.addresses where Self.mayLink(address, fromContact: entry.fromContact) {
                let key = AddressKey(address)
                for holder in holders[key] ?? []
                where address.type == "system" || (address.verified && holder.verified)
                    || (entry.fromContact && holder.contactSources > 0)
                {
                    let node = existing[holder.person] ?? nodes.add()
                    existing[holder.person] = node
                    nodes.union(index, node)
                }
                if let earlier = firstHolder[key] {
                    if address.type == "system" || (address.verified && earlier.verified)
                        || (entry.fromContact && earlier.contact)
                    {
                        nodes.union(index, earlier.node)
                    }
                } else {
                    firstHolder[key] = (index, address.verified, entry.fromContact)
                }
            }
        }
        var firstSeqs: [UUID: Int64] = [:]
        try Task.checkCancellation()
        if !existing.isEmpty {
            let rows = try await connection.query(
                "SELECT id, first_seq FROM names.persons WHERE app_id = \(app) AND id = ANY(\(Array(existing.keys)))",
                logger: logger)
            for try await (id, seq) in rows.decode((UUID, Int64).self) { firstSeqs[id] = seq }
        }
        // The survivor of a component: its oldest person or entry.
        var survivor: [Int: (id: UUID, seq: Int64)] = [:]
        func consider(_ node: Int, _ id: UUID, _ seq: Int64) {
            let root = nodes.find(node)
            if let current = survivor[root], current.seq <= seq { return }
            survivor[root] = (id, seq)
        }
        for (index, entry) in entries.enumerated() { consider(index, entry.id, entry.seq) }
        for (person, node) in existing { if let seq = firstSeqs[person] { consider(node, person, seq) } }
        let personOfEntry = entries.indices.map { survivor[nodes.find($0)]!.id }
        let absorbed = existing.compactMap { person, node in survivor[nodes.find(node)]!.id == person ? nil : person }
        let affected = Array(Set(personOfEntry))

        // 3. Absorbed persons become part of their survivor; new entries join theirs.
        if !absorbed.isEmpty {
            for (person, node) in existing where absorbed.contains(person) {
                try await connection.query(
                    """
                    UPDATE names.person_entries SET person_id = \(survivor[nodes.find(node)]!.id)
                    WHERE app_id = \(app) AND person_id = \(person)
                    """, logger: logger)
            }
            try await delete(app: app, persons: absorbed, connection, logger)
        }
        let documents = try entries.map { String(decoding: try JSONEncoder.sorted.encode($0.document), as: UTF8.self) }
        try await connection.query(
            """
            INSERT INTO names.person_entries (app_id, entry_id, person_id, seq, from_contact, submitted_by, record)
            SELECT \(app), u.entry, u.person, u.seq, u.contact, CASE WHEN u.by_app THEN NULL ELSE u.submitter END,
                u.record::jsonb
            FROM unnest(\(entries.map(\.id))::uuid[], \(personOfEntry)::uuid[], \(entries.map(\.seq))::bigint[],
                        \(entries.map(\.fromContact))::boolean[], \(entries.map { $0.submitter == nil })::boolean[],
                        \(entries.map { $0.submitter ?? "" })::text[], \(documents)::text[])
                AS u(entry, person, seq, contact, by_app, submitter, record)
            """, logger: logger)

        // 4. Every affected person merged again from all of its entries. A person made of new
        // entries only is merged from them as they are, without reading them back.
        let reachesStored = Set(existing.values.map { nodes.find($0) })
        var fresh: [UUID: [StoredEntry]] = [:]
        for (index, entry) in entries.enumerated() where !reachesStored.contains(nodes.find(index)) {
            fresh[personOfEntry[index], default: []].append(
                (entry.seq, entry.fromContact, entry.submitter, entry.detached, entry.document))
        }
        do {
            try await recompute(app: app, persons: affected, fresh: fresh, connection, logger)
        } catch let exceeded as PersonLimit {
            let index = personOfEntry.firstIndex(of: exceeded.person) ?? 0
            throw LimitExceeded(index: index, what: exceeded.what, limit: exceeded.limit)
        }
        return personOfEntry
    }

    /// Whether an address of an entry can join it to another entry's person.
    static func mayLink(_ address: MatchAddress, fromContact: Bool) -> Bool {
        address.type == "system" || address.verified || (fromContact && address.type != "physical")
    }

    /// Removes what tier 2 and 3 hold of `persons`.
    func delete(app: UUID, persons: [UUID], _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("DELETE FROM names.persons WHERE app_id = \(app) AND id = ANY(\(persons))", logger: logger)
        try await connection.query(
            "DELETE FROM names.addresses WHERE app_id = \(app) AND person_id = ANY(\(persons))", logger: logger)
        try await connection.query(
            "DELETE FROM names.blocks WHERE app_id = \(app) AND person_id = ANY(\(persons))", logger: logger)
        try await connection.query(
            "DELETE FROM names.matches WHERE app_id = \(app) AND (a = ANY(\(persons)) OR b = ANY(\(persons)))", logger: logger)
    }
}

/// Disjoint sets over 0..<count, growing.
struct UnionFind {
    private var parent: [Int]
    init(count: Int) { parent = Array(0..<count) }

    mutating func add() -> Int {
        parent.append(parent.count)
        return parent.count - 1
    }

    mutating func find(_ node: Int) -> Int {
        var root = node
        while parent[root] != root { root = parent[root] }
        var current = node
        while parent[current] != root { (parent[current], current) = (root, parent[current]) }
        return root
    }

    mutating func union(_ a: Int, _ b: Int) {
        let (rootA, rootB) = (find(a), find(b))
        if rootA != rootB { parent[max(rootA, rootB)] = min(rootA, rootB) }
    }
}

extension JSONEncoder {
    /// Keys in a fixed order, so that equal documents encode alike.
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
