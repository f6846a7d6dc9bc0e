import AsyncHTTPClient
import Foundation
import LayerDevelopment
import LayerModels
import LayerServer
import NameMatching
import PostgresNIO

/// `layer-bench names`: the import and full deduplication of synthetic persons through the
/// Server API (10,000-record requests), the accuracy of the duplicate pairs read back from
/// `GET /apps/<app>/persons/duplicates` against the generator's truth, and resolutions per second
/// over HTTP with user sessions.
struct NamesRunner {
    let runner: Runner
    let postgres: PostgresClient
    let sizes: [Int]

    func run() async throws {
        for size in sizes {
            try await importAndDeduplicate(records: size)
        }
    }

    func importAndDeduplicate(records count: Int) async throws {
        // Each size in an app of its own, so that the stores do not mix.
        let (app, signer) = try await runner.registerApp()
        let appPath = "/apps/\(app.split(separator: "/").last!)"
        let token =
            try await runner.call(.POST, "/admin/apps/\(app.split(separator: "/").last!)/tokens", bearer: runner.operatorToken)
            .json?["token"]?.stringValue ?? ""
        let dataset = SyntheticPersons(seed: 20_261_124).generate(records: count)
        let bodies = dataset.records.map(Self.json)
        var cpu = CPUTime()
        let start = ContinuousClock.now
        // Two requests in flight, as a client importing a big file would send them: the service
        // reads and answers one while it links the other (an app's imports link one at a time).
        let batches = Array(stride(from: 0, to: bodies.count, by: 10_000))
        var answers: [Int: [String]] = [:]
        try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            func send(_ index: Int) {
                let slice = Array(bodies[batches[index]..<min(batches[index] + 10_000, bodies.count)])
                group.addTask { [runner] in
                    let answer = try await runner.call(
                        .POST, appPath + "/persons", json: ["persons": .array(slice)], bearer: token)
                    guard answer.status == 201, let persons = answer.json?["persons"]?.benchArray else {
                        throw BenchError("importing answered \(answer.status): \(String(describing: answer.json))")
                    }
                    return (index, persons.map { $0["id"]?.stringValue ?? "" })
                }
            }
            var next = 0
            while next < min(2, batches.count) {
                send(next)
                next += 1
            }
            while let (index, persons) = try await group.next() {
                answers[index] = persons
                if next < batches.count {
                    send(next)
                    next += 1
                }
            }
        }
        let personOfRecord = batches.indices.flatMap { answers[$0] ?? [] }
        let importSeconds = runner.seconds(since: start)
        let split = cpu.lap()
        // Every pair down to 0.5, page by page.
        var matches: [(String, String, Double)] = []
        var from: String?
        repeat {
            let query = "?min_probability=0.5&page_size=1000" + (from.map { "&from_id=" + $0 } ?? "")
            let page = try await runner.call(.GET, appPath + "/persons/duplicates" + query, bearer: token)
            let items = page.json?["matches"]?.benchArray ?? []
            for item in items {
                let persons = item["persons"]?.benchArray?.compactMap { $0.stringValue } ?? []
                if persons.count == 2 { matches.append((persons[0], persons[1], item["probability"]?.benchNumber ?? 0)) }
            }
            from = items.count == 1000 ? items.last?["id"]?.stringValue : nil
        } while from != nil
        print(
            String(
                format:
                    "names: %d records imported and deduplicated in %.1f s (%.0f records/s; CPU this process %.1f s, PostgreSQL %.1f s); %d pairs ≥ 0.5 read back",
                count, importSeconds, Double(count) / importSeconds, split.process, split.postgres, matches.count))
        for threshold in [0.5, 0.7, 0.8, 0.9, 0.95] {
            let quality = Self.quality(
                personOfRecord: personOfRecord, entities: dataset.entityIDs, matches: matches.filter { $0.2 >= threshold })
            print(
                String(
                    format: "  at %.2f: precision %.4f, recall %.4f, F1 %.4f", threshold, quality.precision, quality.recall,
                    quality.f1))
        }
        if count == sizes.first { try await resolutions(dataset: dataset, app: app, signer: signer) }
        print("  resident memory of this process (services, PostgreSQL client and load generator): \(runner.residentMB()) MB")
    }

    /// Resolutions per second over HTTP by signed-in users, of addresses the store holds.
    func resolutions(dataset: SyntheticDataset, app: String, signer: IdentityTokenSigner) async throws {
        let sync = SyncRunner(runner: runner, postgres: postgres, signer: signer, app: app)
        var sessions: [String] = []
        for index in 0..<runner.options.clients { sessions.append(try await sync.session(user: "resolver-\(index)")) }
        let addresses = dataset.records.flatMap { record in
            record.addresses.filter { $0.type == "email" || $0.type == "phone" }.map { "\($0.type):\($0.value)" }
        }
        let resolvers = sessions
        let queries = addresses.prefix(5000).map {
            "/resolve?address=" + $0.addingPercentEncoding(withAllowedCharacters: .layerUnreserved)!
        }
        var cpu = CPUTime()
        let rate = try await runner.forDuration { index in
            let answer = try await runner.call(.GET, queries[index % queries.count], session: resolvers[index % resolvers.count])
            guard answer.status == 200 else { throw BenchError("resolving answered \(answer.status)") }
        }
        runner.report("  resolutions", rate.count, rate.seconds, cpu: cpu.lap())
    }

    /// Precision, recall and F1 of the record pairs the service calls one person: records of one
    /// person, and records of the two persons of each match.
    static func quality(personOfRecord: [String], entities: [Int], matches: [(String, String, Double)])
        -> (precision: Double, recall: Double, f1: Double)
    {
        var records: [String: [Int]] = [:]
        for (index, person) in personOfRecord.enumerated() { records[person, default: []].append(index) }
        var predicted = Set<Pair>()
        for list in records.values where list.count > 1 {
            for i in 0..<list.count { for j in (i + 1)..<list.count { predicted.insert(Pair(list[i], list[j])) } }
        }
        for (a, b, _) in matches {
            for i in records[a] ?? [] { for j in records[b] ?? [] { predicted.insert(Pair(i, j)) } }
        }
        var byEntity: [Int: Int] = [:]
        for entity in entities { byEntity[entity, default: 0] += 1 }
        let truePairs = byEntity.values.reduce(0) { $0 + $1 * ($1 - 1) / 2 }
        let correct = predicted.filter { entities[$0.low] == entities[$0.high] }.count
        let precision = predicted.isEmpty ? 1 : Double(correct) / Double(predicted.count)
        let recall = truePairs == 0 ? 1 : Double(correct) / Double(truePairs)
        return (precision, recall, precision + recall == 0 ? 0 : 2 * precision * recall / (precision + recall))
    }

    struct Pair: Hashable {
        let low: Int
        let high: Int
        init(_ a: Int, _ b: Int) { (low, high) = a < b ? (a, b) : (b, a) }
    }

    /// A generated record in the API's shape.
    static func json(_ record: PersonRecord) -> JSONValue {
        var object: [String: JSONValue] = [
            "addresses": .array(
                record.addresses.map { ["type": .string($0.type), "value": .string($0.value), "verified": .bool($0.verified)] })
        ]
        if let first = record.firstName { object["first_name"] = .string(first) }
        if let last = record.lastName { object["last_name"] = .string(last) }
        if let birthday = record.birthday { object["birthday"] = .string(birthday) }
        if let location = record.location { object["location"] = .string(location) }
        if let gender = record.gender { object["gender"] = .string(gender) }
        return .object(object)
    }
}

extension JSONValue {
    fileprivate var benchArray: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    fileprivate var benchNumber: Double? {
        if case .number(let value) = self { return value }
        return nil
    }
}
