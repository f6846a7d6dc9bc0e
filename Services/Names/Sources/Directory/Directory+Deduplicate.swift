import Foundation
import LayerModels
import LayerServer
import NameMatching

extension Directory {
    /// `POST /persons/deduplicate`: nothing is stored. The list that comes back holds every
    /// record of `existing` and the records of `new` that duplicate neither an existing record
    /// nor an earlier new one (at ``collapseProbability``); `matches` names every likely
    /// duplicate pair, each record by its own `id` when it sent one, else `existing[i]`/`new[i]`.
    func deduplicate(existing: [ValidatedPerson], new: [ValidatedPerson]) -> JSONValue {
        func reference(_ person: ValidatedPerson, _ list: String, _ index: Int) -> String {
            if case .string(let id)? = person.raw["id"] { return id }
            return "\(list)[\(index)]"
        }
        let existingFeatures = existing.map { MatchFeatures($0.record) }
        let newFeatures = new.map { MatchFeatures($0.record) }
        var matches: [(a: String, b: String, pair: ScoredPair)] = []
        var dropped = Set<Int>()
        for pair in deduplicator.pairs(between: newFeatures, and: existingFeatures, minProbability: Self.reportedProbability) {
            matches.append((reference(existing[pair.b], "existing", pair.b), reference(new[pair.a], "new", pair.a), pair))
            if pair.probability >= Self.collapseProbability { dropped.insert(pair.a) }
        }
        let inside = deduplicator.pairs(in: newFeatures, minProbability: Self.reportedProbability)
            .sorted { ($0.a, $0.b) < ($1.a, $1.b) }
        for pair in inside {
            matches.append((reference(new[pair.a], "new", pair.a), reference(new[pair.b], "new", pair.b), pair))
            // The earlier record of a duplicate pair stays, unless it was dropped itself.
            if pair.probability >= Self.collapseProbability, !dropped.contains(pair.a) { dropped.insert(pair.b) }
        }
        func render(_ person: ValidatedPerson, _ list: String, _ index: Int) -> JSONValue {
            PersonObject.render(
                PersonDocument(record: person.record, devices: person.devices), id: reference(person, list, index))
        }
        let kept =
            existing.enumerated().map { render($1, "existing", $0) }
            + new.enumerated().filter { !dropped.contains($0.offset) }.map { render($1, "new", $0) }
        return [
            "persons": .array(kept),
            "matches": .array(
                matches.sorted { $0.pair.probability > $1.pair.probability }.map { a, b, pair in
                    MatchObject.render(
                        id: UUID(), members: [a, b], probability: pair.probability, evidence: pair.comparison.evidence)
                }),
        ]
    }
}
