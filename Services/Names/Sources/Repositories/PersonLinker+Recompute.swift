import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching
import PostgresNIO

extension PersonLinker {
    /// Merges each of `persons` again from its entries and writes its row, addresses, blocking
    /// keys and matches. `fresh` holds every entry of the persons made of entries just linked (the
    /// others are read back).
    func recompute(
        app: UUID, persons: [UUID], fresh: [UUID: [StoredEntry]] = [:], _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        guard !persons.isEmpty else { return }
        var entries = fresh.mapValues { $0.sorted { $0.seq < $1.seq } }
        let stored = persons.filter { fresh[$0] == nil }
        if !stored.isEmpty {
            let rows = try await connection.query(
                """
                SELECT person_id, seq, from_contact, record::text FROM names.person_entries
                WHERE app_id = \(app) AND person_id = ANY(\(stored)) ORDER BY person_id, seq
                """, logger: logger)
            let decoder = JSONDecoder()
            for try await (person, seq, contact, text) in rows.decode((UUID, Int64, Bool, String).self) {
                entries[person, default: []].append(
                    (seq, contact, try decoder.decode(PersonDocument.self, from: Data(text.utf8))))
            }
        }
        let ids = persons.filter { entries[$0] != nil }
        var documents: [String] = []
        var featureTexts: [String] = []
        var features: [MatchFeatures] = []
        var firstSeqs: [Int64] = []
        var addressRows:
            (person: [UUID], type: [String], value: [String], verified: [Bool], sources: [Int32], contacts: [Int32]) =
                ([], [], [], [], [], [])
        var blockRows: (key: [String], person: [UUID]) = ([], [])
        for id in ids {
            let parts = entries[id]!
            let merged = PersonDocument.merged(parts.map(\.document))
            let feature = MatchFeatures(merged.record)
            features.append(feature)
            documents.append(String(decoding: try JSONEncoder.sorted.encode(merged), as: UTF8.self))
            featureTexts.append(String(decoding: try JSONEncoder.sorted.encode(feature), as: UTF8.self))
            firstSeqs.append(parts[0].seq)
            for address in merged.record.addresses {
                let holders = parts.filter { part in
                    part.document.record.addresses.contains { $0.type == address.type && $0.value == address.value }
                }
                addressRows.person.append(id)
                addressRows.type.append(address.type)
                addressRows.value.append(address.value)
                addressRows.verified.append(address.verified)
                addressRows.sources.append(Int32(holders.count))
                addressRows.contacts.append(Int32(holders.filter(\.contact).count))
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
            INSERT INTO names.persons (app_id, id, first_seq, record, features)
            SELECT \(app), u.id, u.seq, u.record::jsonb, u.features::jsonb
            FROM unnest(\(ids)::uuid[], \(firstSeqs)::bigint[], \(documents)::text[], \(featureTexts)::text[])
                AS u(id, seq, record, features)
            ON CONFLICT (app_id, id) DO UPDATE SET first_seq = excluded.first_seq, record = excluded.record,
                features = excluded.features, updated_at = now()
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO names.addresses (app_id, person_id, type, value, verified, sources, contact_sources)
            SELECT \(app), u.* FROM unnest(\(addressRows.person)::uuid[], \(addressRows.type)::text[], \(addressRows.value)::text[],
                \(addressRows.verified)::boolean[], \(addressRows.sources)::integer[], \(addressRows.contacts)::integer[]) AS u
            """, logger: logger)
        try await connection.query(
            """
            INSERT INTO names.blocks (app_id, key, person_id)
            SELECT \(app), u.key, u.person FROM unnest(\(blockRows.key)::text[], \(blockRows.person)::uuid[]) AS u(key, person)
            """, logger: logger)
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
