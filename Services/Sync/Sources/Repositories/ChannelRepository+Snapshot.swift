import Foundation
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// The channels of a user's latest state (`POST /sync` at anchor 0), after their conversations:
/// each channel they are a member of, followed by the messages the policy asks for. Channel
/// messages have no read state, so `unread_only` gives a channel's last message.
extension ChannelRepository {
    /// Where a paged snapshot stopped among the channels: those before `channel` are done, and of
    /// that one the messages up to `position` (-1: not even the channel itself).
    struct SnapshotCursor: Sendable, Equatable {
        var seq: Int64
        var channel: UUID
        var position: Int64

        static func start(seq: Int64) -> Self {
            Self(seq: seq, channel: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), position: -1)
        }

        init(seq: Int64, channel: UUID, position: Int64) {
            self.seq = seq
            self.channel = channel
            self.position = position
        }

        /// `c.<seq>.<channel>.<position>`: a conversation cursor's shape under its own prefix.
        init?(text: String) {
            guard text.hasPrefix("c."), let cursor = ChangelogRepository.SnapshotCursor(text: "s." + text.dropFirst(2))
            else { return nil }
            self.init(seq: cursor.seq, channel: cursor.conversation, position: cursor.position)
        }

        var text: String { "c.\(seq).\(channel.lowercased).\(position)" }
    }

    /// Whether `user` is a member of any channel.
    func hasChannels(app: UUID, user: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            """
            SELECT 1 FROM sync.channel_members cm JOIN sync.channels ch ON ch.id = cm.channel_id AND ch.deleted_at IS NULL
            WHERE cm.app_id = \(app) AND cm.user_id = \(user) LIMIT 1
            """, logger: logger)
        for try await _ in rows { return true }
        return false
    }

    /// A page of at most `limit` operations of the channels from `cursor` on, and where the next
    /// page starts, if one does.
    func snapshot(
        cursor: SnapshotCursor, policy: ChangelogRepository.SyncPolicy, partialCount: Int, limit: Int,
        presenter: inout Presenter, _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (operations: [OperationObject], next: SnapshotCursor?) {
        guard let user = presenter.viewer else { return ([], nil) }
        let rows = try await connection.query(
            """
            SELECT \(unescaped: ChannelRecord.columns)
            FROM sync.channel_members cm JOIN sync.channels ch ON ch.id = cm.channel_id
            WHERE cm.app_id = \(presenter.app) AND cm.user_id = \(user) AND ch.deleted_at IS NULL AND ch.id >= \(cursor.channel)
            ORDER BY ch.id LIMIT \(Int64(limit + 1))
            """, logger: logger)
        var channels: [ChannelRecord] = []
        for try await row in rows { channels.append(try ChannelRecord(row: row)) }

        let window: Int64 =
            switch policy {
            case .complete: .max
            case .partial: Int64(partialCount)
            case .unreadOnly: 1
            }
        var budget = limit
        var plan: [(channel: ChannelRecord, emitChannel: Bool, messages: [MessageRecord])] = []
        var next: SnapshotCursor?
        var index = channels.startIndex
        pages: while index < channels.endIndex {
            // The channels that their last positions say will fill what is left of the page, one
            // at least; their messages come in one query.
            var end = index
            var estimated = 0
            repeat {
                estimated += 1 + Int(min(window, channels[end].lastPosition))
                end += 1
            } while end < channels.endIndex && estimated <= budget
            let chunk = channels[index..<end]
            index = end
            let resumedAt = { (record: ChannelRecord) in record.id == cursor.channel && cursor.position >= 0 }
            // One more than fits tells whether more follow.
            let fetched = try await windowMessages(
                of: chunk.map { ($0.id, resumedAt($0) ? cursor.position : 0) }, viewer: user, window: window,
                limit: budget + 1, connection, logger)
            for record in chunk {
                let resumed = resumedAt(record)
                if !resumed {
                    guard budget > 0 else {
                        next = SnapshotCursor(seq: cursor.seq, channel: record.id, position: -1)
                        break pages
                    }
                    budget -= 1
                }
                let wanted = fetched[record.id] ?? []
                // Every page makes progress: a channel, or a message of the channel it resumes.
                let taken = Array(wanted.prefix(budget))
                budget -= taken.count
                plan.append((record, !resumed, taken))
                if wanted.count > taken.count {
                    next = SnapshotCursor(
                        seq: cursor.seq, channel: record.id, position: taken.last?.position ?? (resumed ? cursor.position : 0))
                    break pages
                }
            }
        }
        let objects = try await presenter.channels(plan.filter(\.emitChannel).map(\.channel))
        var byID: [UUID: ChannelObject] = [:]
        for (record, object) in zip(plan.filter(\.emitChannel).map(\.channel), objects) { byID[record.id] = object }
        let messages = try await presenter.channelMessages(plan.flatMap(\.messages))
        var messageIterator = messages.makeIterator()
        var operations: [OperationObject] = []
        for step in plan {
            if step.emitChannel {
                operations.append(
                    OperationObject(
                        seq: cursor.seq, type: .newChannel, data: [:], channelID: step.channel.id, channel: byID[step.channel.id])
                )
            }
            for record in step.messages {
                operations.append(
                    OperationObject(
                        seq: cursor.seq, type: .newChannelMessage, messageID: record.id, data: [:], channelID: step.channel.id,
                        channelMessage: messageIterator.next()))
            }
        }
        return (operations, next)
    }

    /// The messages of each channel after its position that the policy's `window` holds (all of
    /// them, the last `partial_count`, or the last one), oldest first, at most `limit` a channel.
    private func windowMessages(
        of channels: [(id: UUID, after: Int64)], viewer: String, window: Int64, limit: Int,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [UUID: [MessageRecord]] {
        guard !channels.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT w.* FROM unnest(\(channels.map(\.id))::uuid[], \(channels.map(\.after))::bigint[]) AS x (id, after)
            CROSS JOIN LATERAL (
                SELECT * FROM (
                    SELECT \(unescaped: MessageRecord.channelColumns) FROM sync.messages m
                    WHERE m.channel_id = x.id AND m.deleted_at IS NULL
                      AND NOT EXISTS (SELECT 1 FROM sync.blocks b
                          WHERE b.app_id = m.app_id AND b.owner_id = \(viewer) AND b.blocked_id = m.sender_id)
                    ORDER BY m.position DESC LIMIT \(window)) AS recent
                WHERE recent.position > x.after
                ORDER BY recent.position LIMIT \(Int64(limit))) AS w
            """, logger: logger)
        var result: [UUID: [MessageRecord]] = [:]
        for try await row in rows {
            let record = try MessageRecord(row: row)
            result[record.conversationID, default: []].append(record)
        }
        // The join keeps no order.
        return result.mapValues { $0.sorted { $0.position < $1.position } }
    }
}
