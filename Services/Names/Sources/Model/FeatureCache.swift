import NameMatching
import Synchronization

/// Decoded match features of stored persons, by the exact text they were stored as.
///
/// Every import compares its records with the stored persons that share a blocking key, and the
/// same persons come back as candidates again and again; decoding their features (JSON, then names
/// folded, phonetic keys, address words) is most of what reading a candidate costs. The key is the
/// stored text itself, so an entry can never be stale: a person whose record changed is stored as
/// another text. Two generations bound the memory: lookups promote entries from the older one,
/// and when the newer fills up the older is dropped.
final class FeatureCache: Sendable {
    /// Entries per generation; at most twice this many are held (about 1 KB each: 100 MB at most).
    let generationSize: Int
    private let generations = Mutex<(current: [String: MatchFeatures], previous: [String: MatchFeatures])>(([:], [:]))

    init(generationSize: Int = 50_000) { self.generationSize = generationSize }

    /// The features stored as `text`, decoded once.
    func features(_ text: String, decode: (String) throws -> MatchFeatures) rethrows -> MatchFeatures {
        if let found = lookup(text) { return found }
        let features = try decode(text)
        insert(text, features)
        return features
    }

    private func lookup(_ text: String) -> MatchFeatures? {
        generations.withLock { generations in
            if let found = generations.current[text] { return found }
            guard let found = generations.previous[text] else { return nil }
            Self.insert(text, found, into: &generations, size: generationSize)
            return found
        }
    }

    private func insert(_ text: String, _ features: MatchFeatures) {
        generations.withLock { Self.insert(text, features, into: &$0, size: generationSize) }
    }

    private static func insert(
        _ text: String, _ features: MatchFeatures,
        into generations: inout (current: [String: MatchFeatures], previous: [String: MatchFeatures]), size: Int
    ) {
        if generations.current.count >= size {
            generations.previous = generations.current
            generations.current = [:]
        }
        generations.current[text] = features
    }

    var count: Int { generations.withLock { $0.current.count + $0.previous.count } }
}
