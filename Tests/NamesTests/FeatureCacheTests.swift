import NameMatching
import Testing

@testable import LayerNames

/// The cache of decoded candidate features: each stored text is decoded once while it is held,
/// and no more than two generations are ever held, however many persons an app has.
@Suite struct FeatureCacheTests {
    @Test func eachTextIsDecodedOnceAndMemoryStaysBounded() {
        let cache = FeatureCache(generationSize: 3)
        var decoded: [String] = []
        func read(_ text: String) -> MatchFeatures {
            cache.features(text) { text in
                decoded.append(text)
                return MatchFeatures(PersonRecord(firstName: text))
            }
        }
        #expect(read("ann").record.firstName == "ann")
        #expect(read("ann").record.firstName == "ann")
        #expect(decoded == ["ann"])
        for name in (0..<20).map({ "p\($0)" }) { _ = read(name) }
        #expect(cache.count <= 6)
        // A text read again while still held is not decoded again; one long gone is.
        _ = read("p19")
        _ = read("ann")
        #expect(decoded.filter { $0 == "p19" }.count == 1)
        #expect(decoded.filter { $0 == "ann" }.count == 2)
    }
}
