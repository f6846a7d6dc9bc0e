import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching
import PostgresNIO

extension PersonLinker {
    /// A person would hold more than one of the limits allows.
    struct PersonLimit: Error {
        var person: UUID
        var what: String
        var limit: Int
    }

    /// What tier 3 records of one address of a person: who stated it.
    private struct AddressSources {
        var fromApp = false
        var users = Set<String>()
        var contacts: Int32 = 0
    }

    /// Merges each of `persons` again from its entries and writes its row, addresses, blocking
    /// keys and matches. `fresh` holds every entry of the persons made of entries just linked (the
    /// others are read back). Throws ``PersonLimit`` before writing anything when a person would
    /// exceed ``maxEntries``, ``maxAddresses`` or ``maxDevices``.
    func recompute(
        app: UUID, persons: [UUID], fresh: [UUID: [StoredEntry]] = [:], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        guard !persons.isEmpty else { return }
        var entries = fresh.mapValues { $0.sorted { $0.seq < $1.seq } }
        let stored = persons.filter { fresh[$0] == nil }
        if !stored.isEmpty {
            let rows = try await connection.query(
                """
                SELECT pe.person_id, pe.seq, pe.from_contact, pe.submitted_by,
                    EXISTS (SELECT 1 FROM names.detached_entries d WHERE d.app_id = pe.app_id AND d.entry_id = pe.entry_id),
                    pe.record::text
                FROM names.person_entries pe
                WHERE pe.app_id = \(app) AND pe.person_id = ANY(\(stored)) ORDER BY pe.person_id, pe.seq
                """, logger: logger)
            let decoder = JSONDecoder()
            for try await (person, seq, contact, submitter, detached, text) in rows.decode(
                (UUID, Int64, Bool, String?, Bool, String).self)
            {
                entries[person, default: []].append(
                    (seq, contact, submitter, detached, try decoder.decode(PersonDocument.self, from: Data(text.utf8))))
            }
        }
        let ids = persons.filter { entries[$0] != nil }
        var documents: [String] = []
        var featureTexts: [String] = []
        var features: [MatchFeatures] = []
        var firstSeqs: [Int64] = []
        var isolated: [Bool] = []
        var addressRows:
            (
                person: [UUID], type: [String], value: [String], verified: [Bool], sources: [Int32], contacts: [Int32],
                fromApp: [Bool], submitters: [String]
            ) = ([], [], [], [], [], [], [], [])
        var blockRows: (key: [String], person: [UUID]) = ([], [])
        for id in ids {
            try Task.checkCancellation()
            let parts = entries[id]!
            guard parts.count <= Self.maxEntries else { throw PersonLimit(person: id, what: "entries", limit: Self.maxEntries) }
            let merged = PersonDocument.merged(parts.map(\.document))
            guard merged.record.addresses.count <= Self.maxAddresses else {
                throw PersonLimit(person: id, what: "addresses", limit: Self.maxAddresses)
            }
            guard merged.devices.count <= Self.maxDevices else {
                throw PersonLimit(person: id, what: "devices", limit: Self.maxDevices)
            }
            let feature = MatchFeatures(merged.record)
            features.append(feature)
            documents.append(String(decoding: try JSONEncoder.sorted.encode(merged), as: UTF8.self))
            featureTexts.append(String(decoding: try JSONEncoder.sorted.encode(feature), as: UTF8.self))
            firstSeqs.append(parts[0].seq)
            isolated.append(parts.count == 1 && parts[0].detached)
            // Who stated each address, in one pass over the entries.
            var sources: [AddressKey: AddressSources] = [:]
            for part in parts {
                for address in part.document.record.addresses {
                    let key = AddressKey(address)
                    // Changed in place: a copy of the set per entry would make a popular address quadratic.
                    if let user = part.submitter {
                        sources[key, default: .init()].users.insert(user)
                    } else {
                        sources[key, default: .init()].fromApp = true
                    }
                    if part.contact { sources[key, default: .init()].contacts += 1 }
                }
            }
            for address in merged.record.addresses {
                let found = sources[AddressKey(address)] ?? .init()
                addressRows.person.append(id)
                addressRows.type.append(address.type)
                addressRows.value.append(address.value)
                addressRows.verified.append(address.verified)
                addressRows.sources.append(Int32(found.users.count + (found.fromApp ? 1 : 0)))
                addressRows.contacts.append(found.contacts)
                addressRows.fromApp.append(found.fromApp)
                addressRows.submitters.append(
                    String(decoding: try JSONEncoder.sorted.encode(found.users.sorted()), as: UTF8.self))
            }
            for key in Set(feature.blockingKeys) {
                blockRows.key.append(key)
                blockRows.person.append(id)
            }
        }
        try await connection.query(
            "DELETE FROM names.addresses WHERE app_id = \(app) AND person_id = ANY(\(persons))", logger: logger)
        try await connection.query(
            "DELETE FROM names.blocks WHERE app_id = \(app) AND person_id = ANY(\(persons))", logger: logger)
        try await connection.query(
            "DELETE FROM names.matches WHERE app_id = \(app) AND (a = ANY(\(persons)) OR b = ANY(\(persons)))", logger: logger)
        try await connection.query(
            """
            INSERT INTO names.persons (app_id, id, first_seq, record, features, isolated)
            SELECT \(app), u.id, u.seq, u.record::jsonb, u.features::jsonb, u.isolated
            FROM unnest(\(ids)::uuid[], \(firstSeqs)::bigint[], \(documents)::text[], \(featureTexts)::text[],
                \(isolated)::boolean[]) AS u(id, seq, record, features, isolated)
            ON CONFLICT (app_id, id) DO UPDATE SET first_seq = excluded.first_seq, record = excluded.record,
                features = excluded.features, isolated = excluded.isolated, updated_at = now()
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO names.addresses
                (app_id, person_id, type, value, verified, sources, contact_sources, from_app, submitters)
            SELECT \(app), u.person, u.type, u.value, u.verified, u.sources, u.contacts, u.from_app,
                ARRAY(SELECT jsonb_array_elements_text(u.submitters::jsonb))
            FROM unnest(\(addressRows.person)::uuid[], \(addressRows.type)::text[], \(addressRows.value)::text[],
                \(addressRows.verified)::boolean[], \(addressRows.sources)::integer[], \(addressRows.contacts)::integer[],
                \(addressRows.fromApp)::boolean[], \(addressRows.submitters)::text[])
                AS u(person, type, value, verified, sources, contacts, from_app, submitters)
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO names.blocks (app_id, key, person_id)
            SELECT \(app), u.key, u.person FROM unnest(\(blockRows.key)::text[], \(blockRows.person)::uuid[]) AS u(key, person)
            """, logger: logger)
        try Task.checkCancellation()
        try await findMatches(app: app, persons: ids, features: features, keys: Array(Set(blockRows.key)), connection, logger)
    }

    /// Compares `persons` with each other and with the stored persons that share a blocking key,
    /// and keeps the likely duplicates.
    private func findMatches(
        app: UUID, persons: [UUID], features: [MatchFeatures], keys: [String], _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        let (others, otherFeatures) = try await candidates(app: app, keys: keys, excluding: Set(persons), connection, logger)
        var found: [(a: UUID, b: UUID, pair: ScoredPair)] = []
        var stored: Int64 = 0
        for try await count in try await connection.query(
            "SELECT count(*) FROM names.persons WHERE app_id = \(app)", logger: logger
        ).decode(Int64.self) { stored = count }
        var deduplicator = self.deduplicator
        deduplicator.model = try await model(app: app, stored: Int(stored), connection, logger)
        for pair in deduplicator.pairs(in: features, minProbability: Self.keptProbability) {
            found.append((persons[pair.a], persons[pair.b], pair))
        }
        for pair in deduplicator.pairs(between: features, and: otherFeatures, minProbability: Self.keptProbability) {
            found.append((persons[pair.a], others[pair.b], pair))
        }
        guard !found.isEmpty else { return }
        var ids: [UUID] = []
        var lows: [UUID] = []
        var highs: [UUID] = []
        var probabilities: [Double] = []
        var evidence: [String] = []
        for (a, b, pair) in found where a != b {
            let (low, high) = a.lowercased < b.lowercased ? (a, b) : (b, a)
            ids.append(MatchID.of(low, high))
            lows.append(low)
            highs.append(high)
            probabilities.append(pair.probability)
            evidence.append(String(decoding: try JSONEncoder.sorted.encode(pair.comparison.evidence), as: UTF8.self))
        }
        try await connection.query(
            """
            INSERT INTO names.matches (app_id, id, a, b, probability, evidence)
            SELECT \(app), u.* FROM unnest(\(ids)::uuid[], \(lows)::uuid[], \(highs)::uuid[], \(probabilities)::float8[],
                \(evidence)::jsonb[]) AS u
            ON CONFLICT (app_id, a, b) DO UPDATE SET probability = excluded.probability, evidence = excluded.evidence
            """, logger: logger)
    }
}

extension PersonLinker {
    /// The stored persons, other than `excluding`, that hold one of the blocking `keys`, with their
    /// features.
    func candidates(
        app: UUID, keys: [String], excluding: Set<UUID>, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (ids: [UUID], features: [MatchFeatures]) {
        var members: [String: [UUID]] = [:]
        let rows = try await connection.query(
            "SELECT key, person_id FROM names.blocks WHERE app_id = \(app) AND key = ANY(\(keys))", logger: logger)
        for try await (key, person) in rows.decode((String, UUID).self) { members[key, default: []].append(person) }
        var candidates = Set<UUID>()
        for list in members.values where list.count <= Self.largestBlock {
            for person in list where !excluding.contains(person) { candidates.insert(person) }
        }
        var ids: [UUID] = []
        var features: [MatchFeatures] = []
        if !candidates.isEmpty {
            let rows = try await connection.query(
                "SELECT id, features::text FROM names.persons WHERE app_id = \(app) AND id = ANY(\(Array(candidates)))",
                logger: logger)
            for try await (id, text) in rows.decode((UUID, String).self) {
                ids.append(id)
                features.append(try decodedFeatures(text))
            }
        }
        return (ids, features)
    }

    /// Stored features, decoded once for all the imports that meet them (``FeatureCache``).
    func decodedFeatures(_ text: String) throws -> MatchFeatures {
        try featureCache.features(text) { try JSONDecoder().decode(MatchFeatures.self, from: Data($0.utf8)) }
    }
}

/// The id of the match of two persons: the same pair always has the same id, so that a store
/// computed again pages alike.
enum MatchID {
    static func of(_ low: UUID, _ high: UUID) -> UUID {
        // Two rounds of FNV-1a over the pair give the 128 bits; the id names a pair, it guards nothing.
        var bytes: [UInt8] = []
        for id in [low, high] { withUnsafeBytes(of: id.uuid) { bytes += $0 } }
        func fnv(_ seed: UInt64) -> UInt64 {
            var hash = seed
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            return hash
        }
        var value = (fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4))
        return withUnsafeBytes(of: &value) { raw in
            var uuid = UUID().uuid
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            uuid.6 = (uuid.6 & 0x0f) | 0x80  // version 8: custom
            uuid.8 = (uuid.8 & 0x3f) | 0x80
            return UUID(uuid: uuid)
        }
    }
}
