import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching
import PostgresNIO
import Synchronization

/// What the routes of the name resolution service do, for users and for the app's backend alike.
struct Directory: Sendable {
    let persons: PersonRepository
    let policies: PolicyRepository
    let relationships: RelationshipRepository
    let books: AddressBookRepository
    let settings: SettingsRepository
    let deduplicator: Deduplicator
    let defaultRegion: String
    let regions = RegionCache()

    /// Pairs at or above this probability are reported as likely duplicates.
    static let reportedProbability = 0.5
    /// Records of one `POST /persons/deduplicate` list at or above this probability collapse.
    static let collapseProbability = 0.9

    init(postgres: PostgresClient, defaultRegion: String) {
        var deduplicator = Deduplicator(model: .standard)
        // A pair has one probability however the records met (in one import or across several).
        deduplicator.scalesWithRecords = false
        self.deduplicator = deduplicator
        persons = PersonRepository(postgres: postgres, linker: PersonLinker(deduplicator: deduplicator))
        policies = PolicyRepository(postgres: postgres)
        relationships = RelationshipRepository(postgres: postgres)
        books = AddressBookRepository(postgres: postgres)
        settings = SettingsRepository(postgres: postgres)
        self.defaultRegion = defaultRegion
    }

    /// The region national phone numbers are read in for `app`.
    func region(_ app: UUID, logger: Logger) async throws -> String {
        if let region = regions.get(app) { return region }
        let region = try await settings.region(app: app, logger: logger) ?? defaultRegion
        regions.set(app, region)
        return region
    }

    func setRegion(_ app: UUID, _ region: String, logger: Logger) async throws {
        try await settings.setRegion(app: app, region: region, logger: logger)
        regions.set(app, region)
    }

    func reader(_ caller: Caller, logger: Logger) async throws -> PersonReader {
        PersonReader(defaultRegion: try await region(caller.app, logger: logger), submitter: caller.user)
    }

    // MARK: Persons

    /// `POST /persons`: stores the records and answers the persons they became, in order, with
    /// every likely duplicate of them (for a user, compared on what that user may see).
    func add(_ people: [ValidatedPerson], caller: Caller, logger: Logger) async throws -> JSONValue {
        let region = try await region(caller.app, logger: logger)
        let ids = try await persons.add(app: caller.app, people, submitter: caller.user, region: region, logger: logger)
        return try await persons.read(logger: logger) { connection in
            let stored = try await persons.persons(app: caller.app, ids: ids, connection, logger)
            let ownerships = try await policies.ownerships(
                app: caller.app, persons: stored.mapValues(\.document.systemUsers), connection, logger)
            let rendered = ids.compactMap { id in
                stored[id].map { PersonObject.render($0, ownership: ownerships[id], viewer: caller) }
            }
            guard caller.user != nil else {
                let matches = try await MatchRepository.matches(
                    app: caller.app, involving: Array(Set(ids)), minProbability: Self.reportedProbability, connection, logger)
                return ["persons": .array(rendered), "matches": .array(matches)]
            }
            let matches = try await visibleMatches(involving: Array(Set(ids)), caller: caller, connection, logger)
            return ["persons": .array(rendered), "matches": .array(matches)]
        }
    }

    /// The store's matches of `ids` scored again on what `caller` may see of both persons, so that
    /// neither the evidence nor the probability tells them about fields only an owner sees.
    func visibleMatches(
        involving ids: [UUID], caller: Caller, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [JSONValue] {
        let pairs = try await MatchRepository.pairs(
            app: caller.app, involving: ids, minProbability: PersonLinker.keptProbability, connection, logger)
        guard !pairs.isEmpty else { return [] }
        let involved = Array(Set(pairs.flatMap { [$0.a, $0.b] }))
        let stored = try await persons.persons(app: caller.app, ids: involved, connection, logger)
        let ownerships = try await policies.ownerships(
            app: caller.app, persons: stored.mapValues(\.document.systemUsers), connection, logger)
        var found: [(id: UUID, a: UUID, b: UUID, pair: ScoredPair)] = []
        for (id, a, b) in pairs {
            guard let left = stored[a], let right = stored[b] else { continue }
            let views = [(left, ownerships[a]), (right, ownerships[b])].map { person, ownership in
                MatchFeatures(PersonObject.visibleRecord(person, ownership: ownership, viewer: caller))
            }
            if let pair = deduplicator.pairs(between: [views[0]], and: [views[1]], minProbability: Self.reportedProbability).first
            {
                found.append((id, a, b, pair))
            }
        }
        let ordered = found.sorted { left, right in
            guard left.pair.probability == right.pair.probability else { return left.pair.probability > right.pair.probability }
            return left.id.lowercased < right.id.lowercased
        }
        return ordered.map {
            MatchObject.render(
                id: $0.id, members: [LayerID(.persons, $0.a).uri, LayerID(.persons, $0.b).uri], probability: $0.pair.probability,
                evidence: $0.pair.comparison.evidence)
        }
    }

    /// A person as `caller` may see it: 404 when it does not exist in the app or its owner bars
    /// the app.
    func person(_ id: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        let (person, ownership) = try await visiblePerson(id, caller: caller, logger: logger)
        return PersonObject.render(person, ownership: ownership, viewer: caller)
    }

    func visiblePerson(_ id: UUID, caller: Caller, logger: Logger) async throws
        -> (PersonRepository.Person, PolicyRepository.Ownership?)
    {
        try await persons.read(logger: logger) { connection in
            guard let person = try await persons.persons(app: caller.app, ids: [id], connection, logger)[id] else {
                throw APIError.notFound("The person")
            }
            let ownership = try await policies.ownership(app: caller.app, users: person.document.systemUsers, connection, logger)
            if let ownership, ownership.owner != caller.user, ownership.barredApps.contains(caller.app) {
                throw APIError.notFound("The person")
            }
            return (person, ownership)
        }
    }

    /// The person as its owner sees it; 403 for anyone else.
    func ownedPerson(_ id: UUID, caller: Caller, logger: Logger) async throws
        -> (PersonRepository.Person, PolicyRepository.Ownership)
    {
        let (person, ownership) = try await visiblePerson(id, caller: caller, logger: logger)
        guard let ownership, let user = caller.user, ownership.owner == user else {
            throw APIError(.accessDenied, "Only the owner of the person (who claimed it) may change it.")
        }
        return (person, ownership)
    }

    /// `POST /persons/<id>/claim`: the user whose `system` address the person holds takes it.
    func claim(_ id: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        let (person, _) = try await visiblePerson(id, caller: caller, logger: logger)
        guard let user = caller.user, person.document.systemUsers.contains(user) else {
            throw APIError(.accessDenied, "Only the user whose system address the person holds may claim it.")
        }
        try await policies.claim(app: caller.app, user: user, logger: logger)
        return try await self.person(id, caller: caller, logger: logger)
    }

    /// `PATCH /persons/<id>/addresses/<type:value>`: the owner sets an address's policy.
    func setPolicy(
        _ id: UUID, address: AddressKey, policy: String?, removed: Bool?, hidden: Bool?, caller: Caller, logger: Logger
    ) async throws -> JSONValue {
        let (person, ownership) = try await ownedPerson(id, caller: caller, logger: logger)
        guard person.document.record.addresses.contains(where: { $0.type == address.type && $0.value == address.value }) else {
            throw APIError.notFound("The address \(address) of this person")
        }
        var current = ownership.policies[address] ?? .init()
        if let policy { current.policy = policy }
        if let removed { current.removed = removed }
        if let hidden { current.hidden = hidden }
        try await policies.setPolicy(app: caller.app, user: ownership.owner, address: address, current, logger: logger)
        return try await self.person(id, caller: caller, logger: logger)
    }

    /// `GET /persons/<id>/entries`: the entries the owner's person is made of, with who stated each.
    func entries(_ id: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        let (_, ownership) = try await ownedPerson(id, caller: caller, logger: logger)
        let entries = try await persons.read(logger: logger) { connection in
            try await persons.entries(app: caller.app, person: id, connection, logger)
        }
        return ["entries": .array(entries.map { PersonObject.render(entry: $0, owner: ownership.owner) })]
    }

    /// `DELETE /persons/<id>/entries/<entry>`: the owner takes out an entry others attached; the
    /// person as it is then (its id may change: a person is named by its oldest entry).
    func detach(_ id: UUID, entry: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        let (_, ownership) = try await ownedPerson(id, caller: caller, logger: logger)
        let kept = try await persons.detach(app: caller.app, person: id, entry: entry, owner: ownership.owner, logger: logger)
        return try await person(kept, caller: caller, logger: logger)
    }

    /// `PATCH /persons/<id>`: the owner bars apps from their record.
    func setBarredApps(_ id: UUID, apps: [UUID], caller: Caller, logger: Logger) async throws -> JSONValue {
        let (_, ownership) = try await ownedPerson(id, caller: caller, logger: logger)
        try await policies.setBarredApps(app: caller.app, user: ownership.owner, barred: apps, logger: logger)
        return try await self.person(id, caller: caller, logger: logger)
    }
}

/// Each app's phone region, kept for a few seconds: every request reads it, and it seldom changes
/// (another replica's change shows here within ``lifetime``).
final class RegionCache: Sendable {
    static let lifetime = Duration.seconds(5)
    private let entries = Mutex<[UUID: (region: String, until: ContinuousClock.Instant)]>([:])

    func get(_ app: UUID) -> String? {
        entries.withLock { entries in
            guard let entry = entries[app], entry.until > .now else { return nil }
            return entry.region
        }
    }

    func set(_ app: UUID, _ region: String) {
        entries.withLock { entries in
            if entries.count > 10_000 { entries.removeAll() }
            entries[app] = (region, .now + Self.lifetime)
        }
    }
}
