import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// What people decide about their own records: the claim of the record that carries their user
/// id, which apps they bar, and the policy of each of their addresses. It is keyed by user id and
/// address, so it holds whatever person the store computes for them.
struct PolicyRepository: PostgresRepository {
    let postgres: PostgresClient

    /// How one address of a claimed person may be used.
    struct AddressPolicy: Sendable, Equatable {
        /// `public` (anyone in the app may resolve it) or `known_only` (only who names another
        /// address of the same person).
        var policy = "public"
        /// The owner says it is no longer theirs: kept, weighted down, shown to nobody else.
        var removed = false
        /// Shown to nobody else and not resolvable.
        var hidden = false
    }

    /// The owner of a claimed person, the apps they bar and their address policies.
    struct Ownership: Sendable {
        var owner: String
        var barredApps: [UUID]
        var policies: [AddressKey: AddressPolicy]
    }

    /// The ownership of a person whose `system` addresses are `users`: the one of them who
    /// claimed first (claims are numbered as they come); nil when nobody did.
    func ownership(app: UUID, users: [String], _ connection: PostgresConnection, _ logger: Logger) async throws -> Ownership? {
        let person = UUID()
        return try await ownerships(app: app, persons: [person: users], connection, logger)[person]
    }

    /// ``ownership(app:users:_:_:)`` of many persons at once (keyed as `persons` is), in two reads.
    func ownerships(app: UUID, persons: [UUID: [String]], _ connection: PostgresConnection, _ logger: Logger) async throws
        -> [UUID: Ownership]
    {
        let users = Array(Set(persons.values.joined()))
        guard !users.isEmpty else { return [:] }
        var claims: [String: (seq: Int64, barred: [UUID])] = [:]
        let rows = try await connection.query(
            "SELECT user_id, seq, barred_apps FROM names.claims WHERE app_id = \(app) AND user_id = ANY(\(users))",
            logger: logger)
        for try await (user, seq, barred) in rows.decode((String, Int64, [UUID]).self) { claims[user] = (seq, barred) }
        guard !claims.isEmpty else { return [:] }
        var policies: [String: [AddressKey: AddressPolicy]] = [:]
        let policyRows = try await connection.query(
            """
            SELECT user_id, type, value, policy, removed, hidden FROM names.address_policies
            WHERE app_id = \(app) AND user_id = ANY(\(Array(claims.keys)))
            """, logger: logger)
        for try await (user, type, value, policy, removed, hidden) in policyRows.decode(
            (String, String, String, String, Bool, Bool).self)
        {
            policies[user, default: [:]][AddressKey(type: type, value: value)] = AddressPolicy(
                policy: policy, removed: removed, hidden: hidden)
        }
        var result: [UUID: Ownership] = [:]
        for (person, users) in persons {
            let claimed = users.compactMap { user in claims[user].map { (user: user, seq: $0.seq, barred: $0.barred) } }
            guard let first = claimed.min(by: { $0.seq < $1.seq }) else { continue }
            result[person] = Ownership(owner: first.user, barredApps: first.barred, policies: policies[first.user] ?? [:])
        }
        return result
    }

    func claim(app: UUID, user: String, logger: Logger) async throws {
        try await write(
            "INSERT INTO names.claims (app_id, user_id) VALUES (\(app), \(user)) ON CONFLICT DO NOTHING", logger: logger)
    }

    func setBarredApps(app: UUID, user: String, barred: [UUID], logger: Logger) async throws {
        try await write(
            "UPDATE names.claims SET barred_apps = \(barred) WHERE app_id = \(app) AND user_id = \(user)", logger: logger)
    }

    func setPolicy(app: UUID, user: String, address: AddressKey, _ policy: AddressPolicy, logger: Logger) async throws {
        try await write(
            """
            INSERT INTO names.address_policies (app_id, user_id, type, value, policy, removed, hidden)
            VALUES (\(app), \(user), \(address.type), \(address.value), \(policy.policy), \(policy.removed), \(policy.hidden))
            ON CONFLICT (app_id, user_id, type, value) DO UPDATE SET policy = excluded.policy, removed = excluded.removed,
                hidden = excluded.hidden, updated_at = now()
            """, logger: logger)
    }
}
