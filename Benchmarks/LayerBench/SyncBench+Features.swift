import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// `layer-bench sync --receipts` and `sync --search N`: what the receipts switch saves, and how
/// fast search is in a large app (issue 30).
extension SyncRunner {
    /// 6. 25 participants, every message read by the 24 others (a read receipt each, all at once),
    ///    with the conversation's receipts on and then off: what switching them off saves.
    func receiptsSwitch() async throws {
        var cpu = CPUTime()
        for enabled in [true, false] {
            let label = enabled ? "on" : "off"
            var groups: [(sender: String, conversation: String, readers: [String])] = []
            for index in 0..<options.clients {
                let prefix = "receipts-\(label)-\(index)"
                let sender = try await session(user: prefix)
                var readers: [String] = []
                for member in 1..<25 { readers.append(try await session(user: "\(prefix)-member-\(member)")) }
                let members = (1..<25).map { "\(prefix)-member-\($0)" }
                groups.append((sender, try await create(session: sender, members: members, receipts: enabled), readers))
            }
            let ready = groups
            _ = cpu.lap()
            let rate = try await runner.forDuration { index in
                let (sender, conversation, readers) = ready[index % ready.count]
                let message = try await send(session: sender, conversation: conversation, text: "m\(index)")
                let receipts = "/" + message.dropFirst("layer:///".count) + "/receipts"
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for reader in readers {
                        group.addTask {
                            let answer = try await runner.call(.POST, receipts, json: ["type": "read"], session: reader)
                            guard answer.status == 204 else { throw BenchError("a receipt answered \(answer.status)") }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            runner.report(
                "messages into 25-participant conversations, each read by the 24 others, receipts \(label)", rate.count,
                rate.seconds, cpu: cpu.lap())
        }
    }

    /// 7. Search: a user in 1,500 two-person conversations holding `messages` messages in all,
    ///    each of three words: `hello` (in every message), `x<n>` (1 in 50) and `w<n>` (1 in
    ///    5,000). 200 searches of each kind one after another, timed from request to answer, with
    ///    `Layer-Count`; and a prefix (`w12`, 111 words) and two words together. Then again among
    ///    990,000 newer messages of others.
    func search(messages total: Int) async throws {
        let searcher = try await session(user: "searcher")
        let (conversations, _) = try await runner.timed(1500) { index in
            let partner = try await session(user: "search-partner-\(index)")
            return try await create(session: partner, members: ["searcher"])
        }
        let ids = conversations.compactMap { UUID(uuidString: String($0.split(separator: "/").last ?? "")) }
        let perConversation = max(1, total / ids.count)
        let started = ContinuousClock.now
        // One statement per 100 conversations: the words are computed by PostgreSQL as it stores them.
        for chunk in stride(from: 0, to: ids.count, by: 100) {
            let slice = Array(ids[chunk..<min(chunk + 100, ids.count)])
            try await postgres.write(
                """
                WITH c AS (
                    UPDATE sync.conversations SET last_position = last_position + \(Int64(perConversation)), last_message_at = now()
                    WHERE id = ANY(\(slice)) RETURNING app_id, id, created_by)
                INSERT INTO sync.messages (app_id, id, conversation_id, position, sender_id, parts, sent_at)
                SELECT c.app_id, gen_random_uuid(), c.id, g, c.created_by,
                    jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'mime_type', 'text/plain',
                        'body', 'hello x' || (h % 50) || ' w' || (h % 5000))),
                    now() - make_interval(secs => \(Int64(perConversation)) - g)
                FROM c, generate_series(1, \(Int64(perConversation))) AS g,
                    LATERAL (SELECT abs(hashtext(c.id::text || g::text)) AS h) AS r
                """, logger: Logger(label: "bench"))
        }
        try await postgres.write("ANALYZE", logger: Logger(label: "bench"))
        print(
            String(
                format: "search: %d messages in 1,500 conversations stored (words computed by PostgreSQL) in %.1f s",
                perConversation * ids.count, runner.seconds(since: started)))
        try await searches(as: searcher, label: "")
        // The same searches once the app holds as many messages again, of 15,000 conversations of
        // others, all newer than the searcher's: a walk by time passes them all before the first of his.
        let othersStarted = ContinuousClock.now
        let rows = try await postgres.write(
            "SELECT app_id FROM sync.conversations WHERE id = \(ids[0])", logger: Logger(label: "bench"))
        guard let app = try rows.first?.decode(UUID.self) else { throw BenchError("the searcher's conversations are gone") }
        for statement: PostgresQuery in [
            """
            INSERT INTO sync.conversations (app_id, id, created_by, is_distinct, last_position, last_message_at)
            SELECT \(app), gen_random_uuid(), 'other-' || g, false, 66, now() FROM generate_series(1, 15000) AS g
            """,
            """
            INSERT INTO sync.participants (app_id, conversation_id, user_id, ordinal)
            SELECT app_id, id, created_by, 0 FROM sync.conversations WHERE app_id = \(app) AND created_by LIKE 'other-%'
            """,
        ]
            // The messages a tenth at a time: one statement for all would outlast the statement timeout.
            + (0..<10).map { (tenth: Int) -> PostgresQuery in
                """
                INSERT INTO sync.messages (app_id, id, conversation_id, position, sender_id, parts, sent_at)
                SELECT c.app_id, gen_random_uuid(), c.id, s, c.created_by,
                    jsonb_build_array(jsonb_build_object('id', gen_random_uuid(), 'mime_type', 'text/plain',
                        'body', 'hello x' || (h % 50) || ' w' || (h % 5000))),
                    now() + make_interval(secs => s)
                FROM sync.conversations c, generate_series(1, 66) AS s,
                    LATERAL (SELECT abs(hashtext(c.id::text || s::text)) AS h) AS r
                WHERE c.app_id = \(app) AND c.created_by LIKE 'other-%'
                  AND substring(c.created_by FROM 7)::int % 10 = \(tenth)
                """
            }
        {
            do {
                try await postgres.write(statement, logger: Logger(label: "bench"))
            } catch {
                throw BenchError("storing the others' messages: \(String(reflecting: error))")
            }
        }
        try await postgres.write("ANALYZE", logger: Logger(label: "bench"))
        print(
            String(
                format: "search: 990,000 newer messages of others in 15,000 conversations stored in %.1f s",
                runner.seconds(since: othersStarted)))
        try await searches(as: searcher, label: ", among as many newer messages of others")
    }

    /// 200 searches of each kind one after another, timed from request to answer.
    private func searches(as searcher: String, label: String) async throws {
        for (what, query) in [
            ("a rare word (1 in 5,000 messages)", "q=w1234"), ("a word in 1 message in 50", "q=x7"),
            ("a word in every message", "q=hello"), ("a prefix of 111 words", "q=w12"), ("two words", "q=x7%20w1234"),
        ] {
            var times: [Double] = []
            var count = ""
            for _ in 0..<200 {
                var request = HTTPClientRequest(url: runner.base + "/search?" + query)
                request.headers.add(name: "Accept", value: MediaType.layerJSON)
                request.headers.add(name: "Authorization", value: "Layer session-token=\"\(searcher)\"")
                let start = ContinuousClock.now
                let response = try await runner.http.execute(request, timeout: .seconds(30))
                _ = try await response.body.collect(upTo: 16 << 20)
                times.append(runner.seconds(since: start) * 1000)
                guard response.status == .ok else { throw BenchError("search answered \(response.status)") }
                count = response.headers["Layer-Count"].first ?? "?"
            }
            times.sort()
            print(
                String(
                    format: "search%@, %@ (%@ found): p50 %.1f ms, p99 %.1f ms, max %.1f ms", label, what, count,
                    times[times.count / 2], times[times.count * 99 / 100], times.last ?? 0))
        }
    }
}
