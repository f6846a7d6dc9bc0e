import AsyncHTTPClient
import Foundation
import LayerDevelopment
import LayerModels
import LayerServer
import Logging
import NIOCore
import NIOHTTP1
import PostgresNIO

/// `layer-bench sync`: messages per second into 2- and 25-participant conversations with
/// concurrent senders (every changelog row written), the catch-up of a device 10,000 changes
/// behind, memory, and the plans of the hot queries.
struct SyncRunner {
    let runner: Runner
    let postgres: PostgresClient
    let signer: IdentityTokenSigner
    let app: String

    var options: Options { runner.options }

    func run() async throws {
        if let count = options.firstSync {
            try await firstSync(conversations: count, messages: 100)
            return
        }
        if options.receipts {
            try await receiptsSwitch()
            return
        }
        if let messages = options.search {
            try await search(messages: messages)
            return
        }
        let senders = options.clients
        print("senders: \(senders), PostgreSQL pool: \(options.connections) connections")
        var cpu = CPUTime()

        // 1. Two participants: each sender writes into a conversation with a partner of their own.
        let pairs = try await conversations(count: senders, size: 2, prefix: "pair")
        _ = cpu.lap()
        let pairRate = try await runner.forDuration { index in
            let (session, conversation) = pairs[index % senders]
            try await send(session: session, conversation: conversation, text: "m\(index)")
        }
        runner.report("messages into 2-participant conversations", pairRate.count, pairRate.seconds, cpu: cpu.lap())

        // 2. 25 participants, each conversation with members of its own (25 changelog rows per message).
        let groups = try await conversations(count: senders, size: 25, prefix: "group")
        _ = cpu.lap()
        let groupRate = try await runner.forDuration { index in
            let (session, conversation) = groups[index % senders]
            try await send(session: session, conversation: conversation, text: "m\(index)")
        }
        runner.report("messages into 25-participant conversations", groupRate.count, groupRate.seconds, cpu: cpu.lap())

        // 3. 25 participants, the same 24 listeners in every conversation: every message of every
        //    sender appends to the same 24 changelogs, so those counters are the point of contention.
        let shared = try await sharedListenerConversations(count: senders)
        _ = cpu.lap()
        let sharedRate = try await runner.forDuration { index in
            let (session, conversation) = shared[index % senders]
            try await send(session: session, conversation: conversation, text: "m\(index)")
        }
        runner.report(
            "messages into 25-participant conversations sharing 24 listeners", sharedRate.count, sharedRate.seconds,
            cpu: cpu.lap())

        // 4. Catch-up of a device 10,000 changes behind.
        let reader = try await session(user: "catch-up-reader")
        let sources = try await conversations(count: senders, size: 2, prefix: "feed", partner: "catch-up-reader")
        // The reader's device is up to date now (a snapshot of its 16 empty conversations); the
        // 10,000 messages below are the changes it then misses.
        let anchor = try await sync(session: reader, anchor: .number(0), limit: 5000)["anchor"] ?? .number(0)
        let perSender = 10_000 / senders
        _ = try await runner.timed(perSender * senders) { index in
            let (session, conversation) = sources[index % senders]
            try await send(session: session, conversation: conversation, text: "c\(index)")
        }
        for limit in [500, 5000] {
            var times: [Double] = []
            var count = 0
            for _ in 0..<3 {
                let start = ContinuousClock.now
                var next = anchor
                count = 0
                while true {
                    let page = try await sync(session: reader, anchor: next, limit: limit)
                    if case .array(let operations)? = page["operations"] { count += operations.count }
                    next = page["anchor"] ?? next
                    if page["more"] != .bool(true) { break }
                }
                times.append(runner.seconds(since: start))
            }
            print(
                "catch-up of \(count) changes with limit \(limit): "
                    + times.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", "))
        }
        // The server's share: the same catch-up, reading only the anchor and `more` at the head of
        // each answer instead of decoding every operation.
        for limit in [500, 5000] {
            let start = ContinuousClock.now
            let bytes = try await rawSyncToEnd(session: reader, from: anchor, limit: limit)
            print(
                "catch-up with limit \(limit), answers read but not decoded: "
                    + String(format: "%.0f ms, %.1f MB", runner.seconds(since: start) * 1000, Double(bytes) / 1e6))
        }
        print("resident memory of this process (services, PostgreSQL client and load generator): \(runner.residentMB()) MB")
        try await explain(reader: "catch-up-reader")
        try await firstSync(conversations: 1500, messages: 100)
    }

    /// 5. A new device of a user in `conversations` two-person conversations of `messages` messages
    ///    each, nine in ten of them read on another device: `POST /sync` from anchor 0 with the
    ///    default policy and page size, following `more`, three times.
    func firstSync(conversations count: Int, messages: Int) async throws {
        let reader = try await session(user: "first-sync-reader")
        let (conversations, _) = try await runner.timed(count) { index in
            let sender = try await session(user: "first-sync-\(index)")
            let conversation = try await create(session: sender, members: ["first-sync-reader"])
            try await fill(conversation, messages: messages, session: sender)
            return conversation
        }
        let read = conversations.enumerated().filter { $0.offset % 10 != 0 }.compactMap {
            UUID(uuidString: String($0.element.split(separator: "/").last ?? ""))
        }
        try await postgres.write(
            """
            UPDATE sync.participants p SET read_position = c.last_position FROM sync.conversations c
            WHERE c.id = p.conversation_id AND p.user_id = 'first-sync-reader' AND p.conversation_id = ANY(\(read))
            """, logger: Logger(label: "bench"))
        // The statistics of a database that has held this history for a while, not of one filled a
        // moment ago (autovacuum would get there within a minute).
        try await postgres.write("ANALYZE", logger: Logger(label: "bench"))
        // As a client decodes it: every answer parsed, the operations counted.
        var start = ContinuousClock.now
        var anchor: JSONValue = .number(0)
        var pages = 0
        var operations = 0
        while true {
            let answer = try await runner.call(.POST, "/sync", json: ["anchor": anchor], session: reader)
            guard answer.status == 200, let page = answer.json else { throw BenchError("sync answered \(answer.status)") }
            pages += 1
            if case .array(let list)? = page["operations"] { operations += list.count }
            anchor = page["anchor"] ?? anchor
            if page["more"] != .bool(true) { break }
        }
        print(
            "first sync of a user in \(count) conversations of \(messages) messages (9 in 10 read): \(pages) pages, "
                + "\(operations) operations, "
                + String(format: "%.0f ms with every answer decoded by this process", runner.seconds(since: start) * 1000))
        // The server's share: the answers read up to `anchor` and `more` only, as in the catch-up.
        var cpu = CPUTime()
        for _ in 0..<3 {
            start = ContinuousClock.now
            let bytes = try await rawSyncToEnd(session: reader, from: .number(0), limit: nil)
            let split = cpu.lap()
            print(
                String(
                    format: "first sync, answers read but not decoded: %.0f ms, %.1f MB (CPU: this process %.0f ms, "
                        + "PostgreSQL %.0f ms)", runner.seconds(since: start) * 1000, Double(bytes) / 1e6,
                    split.process * 1000, split.postgres * 1000))
        }
        try await firstSyncFromOutside(session: reader)
    }

    /// The same first sync as a client in a process of its own sees it (`scripts/first-sync-client.py`),
    /// while this process only serves.
    func firstSyncFromOutside(session: String) async throws {
        let script = "scripts/first-sync-client.py"
        guard FileManager.default.fileExists(atPath: script) else {
            print("first sync from a separate process: run from the repository's root to use \(script)")
            return
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("first-sync-\(UUID()).out").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        let pid = try Subprocess.spawn(
            "/usr/bin/env", ["python3", script, "--base", runner.base, "--token", session, "--runs", "3"], outputPath: output)
        // Polled, not waited for: a blocking wait would hold one of the threads that serve it.
        while Subprocess.exitStatus(of: pid, block: false) == nil { try await Task.sleep(for: .milliseconds(50)) }
        print((try? String(contentsOfFile: output, encoding: .utf8)) ?? "", terminator: "")
    }

    /// Puts `count - 1` copies of a message sent through the API straight into the conversation
    /// (`count` in all): a long history in seconds.
    func fill(_ conversation: String, messages count: Int, session: String) async throws {
        guard count > 0 else { return }
        let first = try await send(session: session, conversation: conversation, text: "history")
        guard count > 1 else { return }
        guard let id = UUID(uuidString: String(first.split(separator: "/").last ?? "")),
            let conversationID = UUID(uuidString: String(conversation.split(separator: "/").last ?? ""))
        else { throw BenchError("unexpected ids \(first), \(conversation)") }
        let extra = Int64(count - 1)
        try await postgres.write(
            """
            WITH c AS (
                UPDATE sync.conversations SET last_position = last_position + \(extra), last_message_at = now()
                WHERE id = \(conversationID) RETURNING last_position)
            INSERT INTO sync.messages (app_id, id, conversation_id, position, sender_id, parts)
            SELECT m.app_id, gen_random_uuid(), m.conversation_id, c.last_position - \(extra) + g, m.sender_id, m.parts
            FROM sync.messages m, c, generate_series(1, \(extra)) AS g
            WHERE m.id = \(id)
            """, logger: Logger(label: "bench"))
    }

    // MARK: Setup

    func session(user: String) async throws -> String {
        let nonce = try await runner.call(.POST, "/nonces").json?["nonce"]?.stringValue ?? ""
        let token = try signer.token(userID: user, nonce: nonce)
        return try await runner.call(.POST, "/sessions", json: ["identity_token": .string(token), "app_id": .string(app)])
            .json?["session_token"]?.stringValue ?? ""
    }

    /// One conversation per sender with `size - 1` members of its own; returns (sender session, conversation path).
    func conversations(count: Int, size: Int, prefix: String, partner: String? = nil) async throws -> [(String, String)] {
        var result: [(String, String)] = []
        for index in 0..<count {
            let sender = try await session(user: "\(prefix)-\(index)")
            let members = partner.map { [$0] } ?? (1..<size).map { "\(prefix)-\(index)-member-\($0)" }
            result.append((sender, try await create(session: sender, members: members)))
        }
        return result
    }

    func sharedListenerConversations(count: Int) async throws -> [(String, String)] {
        var result: [(String, String)] = []
        let listeners = (0..<24).map { "listener-\($0)" }
        for index in 0..<count {
            let sender = try await session(user: "shared-sender-\(index)")
            result.append((sender, try await create(session: sender, members: listeners)))
        }
        return result
    }

    func create(session: String, members: [String], receipts: Bool = true) async throws -> String {
        let answer = try await runner.call(
            .POST, "/conversations",
            json: [
                "participants": .array(members.map { .string($0) }), "distinct": false, "receipts_enabled": .bool(receipts),
            ],
            session: session)
        guard answer.status == 201, let id = answer.json?["id"]?.stringValue else {
            throw BenchError("creating a conversation answered \(answer.status)")
        }
        return "/" + id.dropFirst("layer:///".count)
    }

    /// Sends a text message; returns its id (`layer:///messages/…`) from the 201.
    @discardableResult
    func send(session: String, conversation: String, text: String) async throws -> String {
        let answer = try await runner.call(
            .POST, conversation + "/messages", json: ["parts": [["mime_type": "text/plain", "body": .string(text)]]],
            session: session)
        guard answer.status == 201, let id = answer.json?["id"]?.stringValue else {
            throw BenchError("sending answered \(answer.status)")
        }
        return id
    }

    func sync(session: String, anchor: JSONValue, limit: Int) async throws -> JSONValue {
        let answer = try await runner.call(
            .POST, "/sync", json: ["anchor": anchor, "limit": .number(Double(limit))], session: session)
        guard answer.status == 200, let json = answer.json else { throw BenchError("sync answered \(answer.status)") }
        return json
    }

    /// `POST /sync` from `anchor`, following `more` with ``rawSync(session:anchor:limit:)``; the
    /// bytes of all the answers.
    func rawSyncToEnd(session: String, from anchor: JSONValue, limit: Int?) async throws -> Int {
        var next = anchor
        var bytes = 0
        while true {
            let (body, page) = try await rawSync(session: session, anchor: next, limit: limit)
            bytes += body
            next = page.anchor
            if !page.more { return bytes }
        }
    }

    /// One `POST /sync`, its answer read only up to `anchor` and `more`, which its encoding puts first.
    func rawSync(session: String, anchor: JSONValue, limit: Int?) async throws -> (Int, (anchor: JSONValue, more: Bool)) {
        var request = HTTPClientRequest(url: runner.base + "/sync")
        request.method = .POST
        request.headers.add(name: "Accept", value: MediaType.layerJSON)
        request.headers.add(name: "Authorization", value: "Layer session-token=\"\(session)\"")
        request.headers.add(name: "Content-Type", value: MediaType.json)
        request.body = .bytes(
            ByteBuffer(
                data: try StreamingJSONEncoder.data(
                    ["anchor": anchor, "limit": limit.map { .number(Double($0)) } ?? .null] as JSONValue)))
        let response = try await runner.http.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 256 << 20)
        let head = String(buffer: body.getSlice(at: body.readerIndex, length: min(200, body.readableBytes)) ?? body)
        // {"anchor":123,"more":true,"operations":…
        let anchorText = head.split(separator: ",").first?.split(separator: ":").last.map(String.init) ?? "0"
        let anchor: JSONValue =
            anchorText.hasPrefix("\"") ? .string(String(anchorText.dropFirst().dropLast())) : .number(Double(anchorText) ?? 0)
        return (body.readableBytes, (anchor, head.contains("\"more\":true")))
    }

    // MARK: Plans

    /// Prints the plans PostgreSQL chose for the hot queries, with their real row counts and times.
    func explain(reader: String) async throws {
        let logger = Logger(label: "bench")
        let appID = UUID(uuidString: String(app.split(separator: "/").last!))!
        let statements: [(String, PostgresQuery)] = [
            (
                "catch-up page (500 changelog rows of one user)",
                """
                EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT seq, type, conversation_id, message_id, data::text
                FROM sync.changelog WHERE app_id = \(appID) AND user_id = \(reader) AND seq > 100 ORDER BY seq LIMIT 501
                """
            ),
            (
                "messages of a catch-up page by id",
                """
                EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT m.* FROM sync.messages m
                WHERE m.id = ANY(ARRAY(SELECT message_id FROM sync.changelog
                    WHERE app_id = \(appID) AND user_id = \(reader) AND seq > 100 ORDER BY seq LIMIT 500))
                """
            ),
            (
                "changelog append for 25 users",
                """
                EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT sync.append_change(
                    \(appID), ARRAY(SELECT 'explain-' || g FROM generate_series(1, 25) AS g), 'update_conversation',
                    NULL, NULL, NULL)
                """
            ),
        ]
        for (title, statement) in statements {
            print("\n-- \(title)")
            // EXPLAIN ANALYZE runs the statement; the transaction is rolled back so nothing stays.
            do {
                try await postgres.withTransaction(logger: logger) { connection in
                    for try await line in try await connection.query(statement, logger: logger).decode(String.self) {
                        print(line)
                    }
                    throw Rollback()
                }
            } catch let error as PostgresTransactionError where error.closureError is Rollback {}
        }
    }
}

struct Rollback: Error {}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
