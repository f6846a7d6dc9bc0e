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
        /// The app's backend stated the address: between candidates scored alike, its word goes first.
        var fromApp: Bool
        var users: [String]
        var barredApps: [UUID]
    }

    /// How sure an address names the person that holds it. A `system` address (the app's user id)
    /// or one the app's backend verified: 0.99. Otherwise each distinct submitter halves the doubt,
    /// up to 0.9, so that no number of self-asserted or address-book statements reaches a
    /// verified address. A removed address counts a quarter, and so does the person of an entry
    /// an owner detached from theirs (what they disowned should not compete with them).
    static func score(_ holder: PersonRepository.Holder) -> Double {
        let unproven = min(0.9, 1 - pow(0.5, Double(holder.submitters + 1)))
        let score = holder.address.type == "system" || holder.verified ? 0.99 : unproven
        return holder.policy.removed || holder.isolated ? score * 0.25 : score
    }

    /// Whether `caller` may reach the person of `holder` through its address: the owner always;
    /// anyone else unless the address is hidden or the app barred, and for a `known_only` address
    /// only with `known`: another address of the same person that is public, neither hidden nor
    /// removed, not `system` (visible in every shared conversation) and not one the caller stated
    /// itself (which proves nothing about knowing the person). `others` holds the rows of the
    /// same read for `known`.
    static func admits(
        _ holder: PersonRepository.Holder, known: AddressKey?, others: [PersonRepository.Holder], caller: Caller
    ) -> Bool {
        if holder.owner != nil && holder.owner == caller.user { return true }
        if holder.policy.hidden || holder.barredApps.contains(caller.app) { return false }
        guard holder.policy.policy == "known_only" else { return true }
        guard let known, known != holder.address, known.type != "system" else { return false }
        return others.contains { other in
            other.person == holder.person && other.address == known && other.policy.policy == "public"
                && !other.policy.hidden && !other.policy.removed && !other.source.includes(caller)
        }
    }

    /// The persons `address` may name for `caller`, best first (see ``score(_:)`` and
    /// ``admits(_:known:others:caller:)``). Between candidates scored alike, the one the app's
    /// backend vouched for comes first, then the one the caller has messaged or called most.
    func candidates(for address: AddressKey, known: AddressKey?, caller: Caller, logger: Logger) async throws -> [Candidate] {
        let rows = try await persons.holders(app: caller.app, of: [address] + (known.map { [$0] } ?? []), logger: logger)
        let found = rows.filter { $0.address == address && Self.admits($0, known: known, others: rows, caller: caller) }
            .map { holder in
                Candidate(
                    person: holder.person, score: Self.score(holder), fromApp: holder.source.fromApp,
                    users: holder.systemUsers, barredApps: holder.barredApps)
            }
        guard found.count > 1 else { return found }
        var ties: [String: Int64] = [:]
        if let user = caller.user {
            ties = try await relationships.strength(app: caller.app, user: user, others: found.flatMap(\.users), logger: logger)
        }
        func strength(_ candidate: Candidate) -> Int64 { candidate.users.reduce(0) { $0 + (ties[$1] ?? 0) } }
        return found.sorted { left, right in
            if abs(left.score - right.score) > 1e-9 { return left.score > right.score }
            if left.fromApp != right.fromApp { return left.fromApp }
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
    /// address there), when their policy allows it. Every refusal is the same 404, so that the
    /// answer does not tell an app the person bars from a person who is not there.
    func route(_ address: AddressKey, to app: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        let unreachable = APIError(.notFound, "Nobody with that address can be reached in that app.")
        // Each app has a store of its own: a person is known in no other app.
        guard let best = try await candidates(for: address, known: nil, caller: caller, logger: logger).first,
            !best.barredApps.contains(app), app == caller.app
        else { throw unreachable }
        let ownership = try await persons.read(logger: logger) { connection in
            try await policies.ownership(app: caller.app, users: best.users, connection, logger)
        }
        let usable = best.users.first { user in
            let policy = ownership?.policies[AddressKey(type: "system", value: user)] ?? .init()
            return policy.policy == "public" && !policy.hidden && !policy.removed
        }
        guard let user = usable else { throw unreachable }
        return ["person_id": .string(LayerID(.persons, best.person).uri), "address": .string("system:\(user)")]
    }
}
