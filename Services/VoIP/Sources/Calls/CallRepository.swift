import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// Calls in PostgreSQL. Every change of state is one conditional `UPDATE`: it moves the call only
/// if it is still in the state the move starts from, so of two moves at once exactly one happens.
struct CallRepository: PostgresRepository {
    let postgres: PostgresClient

    private static let columns = """
        app_id, id, caller, callee, media, state, caller_token, caller_candidates::text, callee_token,
        callee_candidates::text, answered_device, created_at, ring_deadline, answered_at, ended_at, ended_by
        """

    func insert(_ placement: CallInput.Placement, app: UUID, caller: String, ringSeconds: Int, logger: Logger) async throws
        -> Call
    {
        let rows = try await write(
            """
            INSERT INTO voip.calls (app_id, id, caller, callee, media, state, caller_token, caller_candidates, ring_deadline)
            VALUES (\(app), \(UUID()), \(caller), \(placement.callee), \(placement.media), 'ringing', \(placement.callerToken),
                    \(try Self.json(placement.candidates))::jsonb, now() + make_interval(secs => \(ringSeconds)))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger)
        guard let row = rows.first else { throw APIError(.internalServerError, "The call was not stored.") }
        return try Self.call(row)
    }

    func call(app: UUID, id: UUID, logger: Logger) async throws -> Call? {
        let rows = try await postgres.query(
            "SELECT \(unescaped: Self.columns) FROM voip.calls WHERE app_id = \(app) AND id = \(id)", logger: logger)
        for try await row in rows { return try Self.call(row) }
        return nil
    }

    /// Moves the call from `from` to `to` if it is still in `from`; the call as it is then, or nil
    /// when another move came first.
    func move(
        app: UUID, id: UUID, from: CallState, to: CallState, endedBy: String?, answer: CallInput.Answer? = nil,
        logger: Logger
    ) async throws -> Call? {
        let rows = try await write(
            """
            UPDATE voip.calls SET state = \(to.rawValue),
                callee_token = coalesce(\(answer?.calleeToken), callee_token),
                callee_candidates = coalesce(\(try answer.map { try Self.json($0.candidates) })::jsonb, callee_candidates),
                answered_device = coalesce(\(answer?.deviceID), answered_device),
                answered_at = CASE WHEN \(to.rawValue) = 'answered' THEN clock_timestamp() ELSE answered_at END,
                ended_at = CASE WHEN \(to.isFinal) THEN clock_timestamp() ELSE ended_at END,
                ended_by = coalesce(\(endedBy), ended_by)
            WHERE app_id = \(app) AND id = \(id) AND state = \(from.rawValue)
            RETURNING \(unescaped: Self.columns)
            """, logger: logger)
        return try rows.first.map(Self.call)
    }

    /// A page of `user`'s calls (placed or received), newest first, after the call `from`; and how
    /// many there are in all.
    func calls(app: UUID, user: String, filter: CallFilter = CallFilter(), paging: Paging, logger: Logger) async throws -> (
        calls: [Call], total: Int
    ) {
        try await read(logger: logger) { connection in
            var after: (Date, UUID)?
            if let from = paging.fromID {
                let rows = try await connection.query(
                    """
                    SELECT created_at FROM voip.calls
                    WHERE app_id = \(app) AND id = \(from) AND (caller = \(user) OR callee = \(user))
                    """, logger: logger)
                for try await created in rows.decode(Date.self) { after = (created, from) }
                guard after != nil else { throw APIError.invalid("from_id", "from_id is not one of your calls.") }
            }
            // The user's calls, with whom, when and in which state asked for; absent filters are NULL.
            var binds = PostgresBindings()
            binds.append(app)
            binds.append(user)
            binds.appendOptional(filter.with)
            binds.appendOptional(filter.from)
            binds.appendOptional(filter.to)
            binds.appendOptional(filter.state?.rawValue)
            let mine = """
                FROM voip.calls
                WHERE app_id = $1 AND (caller = $2 OR callee = $2)
                  AND ($3::text IS NULL OR caller = $3::text OR callee = $3::text)
                  AND ($4::timestamptz IS NULL OR created_at >= $4::timestamptz)
                  AND ($5::timestamptz IS NULL OR created_at < $5::timestamptz)
                  AND ($6::text IS NULL OR state = $6::text)
                """
            var total: Int64 = 0
            let counted = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT count(*) \(mine)", binds: binds), logger: logger)
            for try await count in counted.decode(Int64.self) { total = count }
            binds.appendOptional(after?.0)
            binds.appendOptional(after?.1)
            binds.append(Int64(paging.pageSize))
            let rows = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT \(Self.columns) \(mine)
                          AND ($7::timestamptz IS NULL OR (created_at, id) < ($7::timestamptz, $8::uuid))
                        ORDER BY created_at DESC, id DESC LIMIT $9
                        """, binds: binds), logger: logger)
            var calls: [Call] = []
            for try await row in rows { calls.append(try Self.call(row)) }
            return (calls, Int(total))
        }
    }

    /// Ringing calls whose time is up, moved to `missed`: each by exactly one replica, since the
    /// rows are taken with `SKIP LOCKED` and moved only if still ringing.
    func missDue(limit: Int = 500, logger: Logger) async throws -> [Call] {
        let rows = try await write(
            """
            WITH due AS (
                SELECT app_id, id FROM voip.calls WHERE state = 'ringing' AND ring_deadline <= now()
                ORDER BY ring_deadline LIMIT \(limit) FOR UPDATE SKIP LOCKED)
            UPDATE voip.calls c SET state = 'missed', ended_at = clock_timestamp(), ended_by = 'timeout'
            FROM due WHERE c.app_id = due.app_id AND c.id = due.id AND c.state = 'ringing'
            RETURNING \(unescaped: Self.columns.split(separator: ",").map { "c." + $0.trimmingCharacters(in: .whitespacesAndNewlines) }.joined(separator: ", "))
            """, logger: logger)
        return try rows.map(Self.call)
    }

    /// Ringing calls whose caller had a device online when calling: whether they still do is
    /// checked with the sync service.
    func ringingWithOnlineCaller(logger: Logger) async throws -> [(app: UUID, id: UUID, caller: String, goneSince: Date?)] {
        let rows = try await postgres.query(
            """
            SELECT app_id, id, caller, caller_gone_since FROM voip.calls
            WHERE state = 'ringing' AND caller_was_online ORDER BY app_id LIMIT 10000
            """, logger: logger)
        var result: [(app: UUID, id: UUID, caller: String, goneSince: Date?)] = []
        for try await (app, id, caller, gone) in rows.decode((UUID, UUID, String, Date?).self) {
            result.append((app, id, caller, gone))
        }
        return result
    }

    /// Records when the caller of these calls was first seen without a device (nil: seen again).
    func setCallerGone(app: UUID, ids: [UUID], gone: Bool, logger: Logger) async throws {
        guard !ids.isEmpty else { return }
        try await write(
            """
            UPDATE voip.calls SET caller_gone_since = CASE WHEN \(gone) THEN coalesce(caller_gone_since, now()) END
            WHERE app_id = \(app) AND id = ANY(\(ids)) AND state = 'ringing'
            """, logger: logger)
    }

    /// Calls whose caller has been gone for `grace` seconds, moved to `cancelled` (once each).
    func cancelAbandoned(graceSeconds: Int, logger: Logger) async throws -> [Call] {
        let rows = try await write(
            """
            UPDATE voip.calls SET state = 'cancelled', ended_at = clock_timestamp(), ended_by = 'caller_gone'
            WHERE state = 'ringing' AND caller_gone_since <= now() - make_interval(secs => \(graceSeconds))
            RETURNING \(unescaped: Self.columns)
            """, logger: logger)
        return try rows.map(Self.call)
    }

    /// Whether the sweeper has anything to watch: a call ringing, or one whose last move was
    /// not signalled yet. Both are read from partial indexes.
    func needsSweeping(logger: Logger) async throws -> Bool {
        let rows = try await postgres.query(
            """
            SELECT EXISTS (SELECT 1 FROM voip.calls WHERE state = 'ringing')
                OR EXISTS (SELECT 1 FROM voip.calls WHERE signalled_state IS DISTINCT FROM state)
            """, logger: logger)
        for try await needed in rows.decode(Bool.self) { return needed }
        return false
    }

    /// Records that the parties' devices were told of the call in `state` (and, for the ring,
    /// whether the caller had a device online).
    func markSignalled(app: UUID, id: UUID, state: CallState, callerOnline: Bool? = nil, logger: Logger) async throws {
        try await write(
            """
            UPDATE voip.calls SET signalled_state = \(state.rawValue),
                caller_was_online = coalesce(\(callerOnline), caller_was_online)
            WHERE app_id = \(app) AND id = \(id) AND state = \(state.rawValue)
            """, logger: logger)
    }

    /// Calls whose last change was not signalled and is older than `seconds` (its own signal had
    /// that long to go out).
    func unsignalled(olderThan seconds: Int, limit: Int = 100, logger: Logger) async throws -> [Call] {
        let rows = try await postgres.query(
            """
            SELECT \(unescaped: Self.columns) FROM voip.calls
            WHERE signalled_state IS DISTINCT FROM state
              AND coalesce(ended_at, answered_at, created_at) <= now() - make_interval(secs => \(seconds))
            LIMIT \(limit)
            """, logger: logger)
        var calls: [Call] = []
        for try await row in rows { calls.append(try Self.call(row)) }
        return calls
    }

    private static func json(_ candidates: [Candidate]) throws -> String {
        String(decoding: try JSONEncoder().encode(candidates), as: UTF8.self)
    }

    private static func call(_ row: PostgresRow) throws -> Call {
        let columns = row.makeRandomAccess()
        let decoder = JSONDecoder()
        func candidates(_ text: String?) throws -> [Candidate]? {
            try text.map { try decoder.decode([Candidate].self, from: Data($0.utf8)) }
        }
        return Call(
            app: try columns[0].decode(UUID.self), id: try columns[1].decode(UUID.self),
            caller: try columns[2].decode(String.self), callee: try columns[3].decode(String.self),
            media: try columns[4].decode(String.self),
            state: CallState(rawValue: try columns[5].decode(String.self)) ?? .ended,
            callerToken: try columns[6].decode(String.self),
            callerCandidates: try candidates(try columns[7].decode(String.self)) ?? [],
            calleeToken: try columns[8].decode(String?.self),
            calleeCandidates: try candidates(try columns[9].decode(String?.self)),
            answeredDevice: try columns[10].decode(String?.self), createdAt: try columns[11].decode(Date.self),
            ringDeadline: try columns[12].decode(Date.self), answeredAt: try columns[13].decode(Date?.self),
            endedAt: try columns[14].decode(Date?.self), endedBy: try columns[15].decode(String?.self))
    }
}
