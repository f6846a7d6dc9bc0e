import Foundation
import LayerModels
import LayerServer
import Logging
import NameMatching

extension Directory {
    /// `POST /address-books`: stores the contacts as a book of the caller and as entries of the
    /// app's persons store.
    func createBook(_ people: [ValidatedPerson], caller: Caller, logger: Logger) async throws -> JSONValue {
        let region = try await region(caller.app, logger: logger)
        let book = UUID()
        let contacts = try await books.write(logger: logger) { connection in
            let added = try await persons.add(
                app: caller.app, people, submitter: caller.user, region: region, book: book, connection, logger)
            let contacts = zip(added.entries, people).map { entry, person in
                (id: UUID(), entry: entry, document: PersonDocument(record: person.record, devices: person.devices))
            }
            try await books.create(app: caller.app, id: book, owner: caller.user, contacts: contacts, connection, logger)
            return contacts
        }
        return [
            "id": .string(LayerID(.addressBooks, book).uri),
            "contacts": .array(contacts.map { PersonObject.render($0.document, id: LayerID(.contacts, $0.id).uri) }),
        ]
    }

    /// The contacts of a book the caller may read: its owner, or the app's backend.
    func bookContacts(_ book: UUID, caller: Caller, logger: Logger) async throws -> [AddressBookRepository.Contact] {
        try await books.read(logger: logger) { connection in
            guard let owner = try await books.owner(app: caller.app, book: book, connection, logger),
                caller.user == nil || owner == caller.user
            else { throw APIError.notFound("The address book") }
            return try await books.contacts(app: caller.app, book: book, connection, logger)
        }
    }

    /// `GET /address-books/<id>/duplicates`: every candidate pair of the book's contacts. Exact
    /// ones first (the same record twice, probability 1); then pairs whose contacts belong to
    /// one person of the app's store (joined through the books of other users, or resolving
    /// through their addresses to the same person); then pairs that are only alike.
    func bookDuplicates(_ book: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        let contacts = try await bookContacts(book, caller: caller, logger: logger).filter { $0.mergedInto == nil }
        var best: [Pair: (probability: Double, evidence: [String: String], exact: Bool)] = [:]
        func offer(_ a: Int, _ b: Int, _ probability: Double, _ evidence: [String: String], exact: Bool = false) {
            let pair = Pair(min(a, b), max(a, b))
            // The same record twice stays marked exact, whatever probability the model gave it.
            if let current = best[pair], current.probability >= probability, current.exact || !exact { return }
            best[pair] = (probability, evidence, exact)
        }
        let features = contacts.map { MatchFeatures($0.document.record) }
        for pair in deduplicator.pairs(in: features, minProbability: PersonLinker.keptProbability) {
            offer(pair.a, pair.b, pair.probability, pair.comparison.evidence)
        }
        // Global: the persons each contact is or resolves to.
        let reach = try await personsReached(by: contacts, caller: caller, logger: logger)
        var holders: [UUID: [(contact: Int, confidence: Double)]] = [:]
        for (index, reached) in reach.enumerated() {
            for (person, confidence) in reached { holders[person, default: []].append((index, confidence)) }
        }
        for list in holders.values where list.count > 1 && list.count <= 50 {
            for i in 0..<list.count {
                for j in (i + 1)..<list.count where list[i].contact != list[j].contact {
                    offer(list[i].contact, list[j].contact, min(list[i].confidence, list[j].confidence), ["global": "agree"])
                }
            }
        }
        let alike = Dictionary(grouping: contacts.indices) { contacts[$0].document.record }
        for list in alike.values where list.count > 1 {
            for i in 0..<list.count {
                for j in (i + 1)..<list.count { offer(list[i], list[j], 1, ["record": "exact"], exact: true) }
            }
        }
        let ordered = best.sorted { left, right in
            if left.value.exact != right.value.exact { return left.value.exact }
            if left.value.probability != right.value.probability { return left.value.probability > right.value.probability }
            return (left.key.a, left.key.b) < (right.key.a, right.key.b)
        }
        return [
            "matches": .array(
                ordered.map { pair, found in
                    let (a, b) = (contacts[pair.a].id, contacts[pair.b].id)
                    return MatchObject.render(
                        id: MatchID.of(a, b), members: [LayerID(.contacts, a).uri, LayerID(.contacts, b).uri],
                        probability: found.probability, evidence: found.evidence, kind: "contacts")
                })
        ]
    }

    /// For each contact, the persons of the store it is part of (confidence 0.99) or that its
    /// addresses resolve to for the caller (with the resolution's score), in two reads whatever
    /// the number of contacts.
    private func personsReached(
        by contacts: [AddressBookRepository.Contact], caller: Caller, logger: Logger
    ) async throws -> [[UUID: Double]] {
        let own = try await books.read(logger: logger) { connection in
            try await books.persons(app: caller.app, entries: contacts.map(\.entry), connection, logger)
        }
        let keys = Set(contacts.flatMap { $0.document.record.addresses.filter { $0.type != "physical" }.map(AddressKey.init) })
        let holders = try await persons.holders(app: caller.app, of: Array(keys), logger: logger)
        var byAddress: [AddressKey: [PersonRepository.Holder]] = [:]
        for holder in holders where Self.admits(holder, known: nil, others: [], caller: caller) {
            byAddress[holder.address, default: []].append(holder)
        }
        return contacts.map { contact in
            var reached: [UUID: Double] = [:]
            if let person = own[contact.entry] { reached[person] = 0.99 }
            for address in contact.document.record.addresses where address.type != "physical" {
                for holder in byAddress[AddressKey(address)] ?? [] where holder.person != own[contact.entry] {
                    reached[holder.person] = max(reached[holder.person] ?? 0, Self.score(holder))
                }
            }
            return reached
        }
    }

    /// `POST /address-books/<id>/consolidate`: `merge`'s fields fill what `keep` lacks, their
    /// addresses join, and `merge` leaves the book's list.
    func consolidate(_ book: UUID, keep: UUID, merge: UUID, caller: Caller, logger: Logger) async throws -> JSONValue {
        guard keep != merge else { throw APIError.invalid("merge", "A contact cannot be consolidated with itself.") }
        let contacts = try await bookContacts(book, caller: caller, logger: logger)
        guard let kept = contacts.first(where: { $0.id == keep && $0.mergedInto == nil }) else {
            throw APIError(.notFound, "The contact to keep is not in this address book.", property: "keep")
        }
        guard let merged = contacts.first(where: { $0.id == merge && $0.mergedInto == nil }) else {
            throw APIError(.notFound, "The contact to merge is not in this address book.", property: "merge")
        }
        // The kept contact's own fields win: it goes last in the merge, which takes the newest.
        var document = PersonDocument.merged([merged.document, kept.document])
        document.record.addresses =
            kept.document.record.addresses
            + merged.document.record.addresses.filter { address in
                !kept.document.record.addresses.contains { $0.type == address.type && $0.value == address.value }
            }
        try await books.write(logger: logger) { connection in
            try await books.consolidate(app: caller.app, keep: keep, merge: merge, document: document, connection, logger)
        }
        return PersonObject.render(document, id: LayerID(.contacts, keep).uri)
    }
}

/// Two indexes, the smaller first.
struct Pair: Hashable {
    var a: Int
    var b: Int
    init(_ a: Int, _ b: Int) {
        self.a = a
        self.b = b
    }
}
