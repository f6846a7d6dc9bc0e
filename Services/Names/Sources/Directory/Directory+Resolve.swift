import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching

extension Directory {
    /// One person an address may name, and how sure that is.
    struct Candidate: Sendable {
        var person: UUID
        var score: Double
        var users: [String]
        var owner: String?
        var barredApps: [UUID]
    }

    /// The persons `address` may name for `caller`, best first. Hidden addresses, barred apps
    /// and `known_only` addresses without a `known` address of the same person are left out; a
    /// removed address counts a quarter. Between candidates scored alike, the one the caller has
    /// messaged or called most comes first.
    func candidates(for address: AddressKey, known: AddressKey?, caller: Caller, logger: Logger) async throws -> [Candidate] {
        var found: [Candidate] = []
        for holder in try await persons.holders(app: caller.app, of: address, logger: logger) {
            let isOwner = holder.owner != nil && holder.owner == caller.user
            if !isOwner {
                if holder.policy.hidden || holder.barredApps.contains(caller.app) { continue }
                if holder.policy.policy == "known_only" {
                    guard let known, known != address,
                        holder.person.document.record.addresses.contains(where: {
                            $0.type == known.type && $0.value == known.value
                        })
                    else { continue }
                }
            }
            var score = address.type == "system" || holder.verified ? 0.99 : 1 - pow(0.5, Double(holder.sources + 1))
            if holder.policy.removed { score *= 0.25 }
            found.append(
                Candidate(
                    person: holder.person.id, score: score, users: holder.person.document.systemUsers, owner: holder.owner,
                    barredApps: holder.barredApps))
        }
        guard found.count > 1 else { return found }
        var ties: [String: Int64] = [:]
        if let user = caller.user {
            ties = try await relationships.strength(app: caller.app, user: user, others: found.flatMap(\.users), logger: logger)
        }
        func strength(_ candidate: Candidate) -> Int64 { candidate.users.reduce(0) { $0 + (ties[$1] ?? 0) } }
        return found.sorted { left, right in
            if abs(left.score - right.score) > 1e-9 { return left.score > right.score }
            let (a, b) = (strength(left), strength(right))
            if a != b { return a > b }
            return left.person.lowercased < right.person.lowercased
        }
    }

    /// `GET /resolve`: the person an address names, with the confidence of it: the best
    /// candidate's score, scaled by its share of all candidates' scores.
    func resolve(_ address: AddressKey, known: AddressKey?, caller: Caller, logger: Logger) async throws -> JSONValue {
        let found = try await candidates(for: address, known: known, caller: caller, logger: logger)
        guard let best = found.first else { throw APIError.notFound("No person with the address \(address)") }
        let confidence = best.score * best.score / found.reduce(0) { $0 + $1.score }
        return [
            "person_id": .string(LayerID(.persons, best.person).uri),
            "confidence": .number((confidence * 10_000).rounded() / 10_000),
        ]
    }

    /// `POST /route`: the address the person named by `address` uses in `app` (their `system`
    /// address there), when their policy allows it.
    func route(_ address: AddressKey, to app: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        guard let best = try await candidates(for: address, known: nil, caller: caller, logger: logger).first else {
            throw APIError.notFound("No person with the address \(address)")
        }
        if best.barredApps.contains(app) {
            throw APIError(.accessDenied, "The person does not let that app reach them.")
        }
        // Each app has a store of its own: a person is known in no other app.
        guard app == caller.app else { throw APIError.notFound("The person has no address in that app, or the app") }
        let ownership = try await persons.read(logger: logger) { connection in
            try await policies.ownership(app: caller.app, users: best.users, connection, logger)
        }
        let usable = best.users.first { user in
            let policy = ownership?.policies[AddressKey(type: "system", value: user)] ?? .init()
            return policy.policy == "public" && !policy.hidden && !policy.removed
        }
        guard let user = usable else { throw APIError.notFound("The person has no address in that app") }
        return ["person_id": .string(LayerID(.persons, best.person).uri), "address": .string("system:\(user)")]
    }
}
