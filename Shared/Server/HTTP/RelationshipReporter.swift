import Foundation
import LayerModels
import Logging
import ServiceLifecycle
import Synchronization

/// Tells the name resolution service who messaged or called whom, in batches and off the path of
/// the request that did it: ``report(app:from:to:kind:)`` only appends to a buffer, and a
/// background service sends what has gathered once a second. The graph is a hint for telling
/// similar people apart, so a batch the names service cannot take is dropped (and logged), and
/// the buffer is bounded.
public final class RelationshipReporter: Sendable {
    private struct Buffer {
        var events: [UUID: [InternalAPI.Relationships.Event]] = [:]
        var count = 0
        var dropped = 0
    }

    private let buffer = Mutex(Buffer())
    private let names: InternalClient?
    /// The most events waiting at once; beyond it new ones are counted and dropped.
    let capacity: Int

    /// `names` nil reports nothing (the suite runs without a names service).
    public init(names: InternalClient?, capacity: Int = 50_000) {
        self.names = names
        self.capacity = capacity
    }

    public func report(app: UUID, from user: String, to others: [String], kind: InternalAPI.Relationships.Kind) {
        guard names != nil else { return }
        let to = others.filter { $0 != user }
        guard !to.isEmpty else { return }
        buffer.withLock { buffer in
            guard buffer.count < capacity else {
                buffer.dropped += 1
                return
            }
            buffer.events[app, default: []].append(.init(from: user, to: to, kind: kind))
            buffer.count += 1
        }
    }

    /// Sends everything gathered so far; the number of events sent.
    @discardableResult
    public func flush(logger: Logger) async -> Int {
        guard let names else { return 0 }
        let (events, dropped) = buffer.withLock { buffer in
            defer { buffer = Buffer() }
            return (buffer.events, buffer.dropped)
        }
        if dropped > 0 {
            logger.warning("Relationship reports dropped: the buffer was full", metadata: ["dropped": "\(dropped)"])
        }
        var sent = 0
        for (app, list) in events {
            for start in stride(from: 0, to: list.count, by: 5_000) {
                let batch = Array(list[start..<min(start + 5_000, list.count)])
                do {
                    _ = try await names.post(
                        InternalAPI.relationshipsPath, body: InternalAPI.Relationships(appID: app, events: batch),
                        as: InternalAPI.Relationships.Answer.self, idempotent: false, logger: logger)
                    sent += batch.count
                } catch {
                    logger.warning(
                        "Relationship report not delivered", metadata: ["events": "\(batch.count)", "error": "\(error)"])
                }
            }
        }
        return sent
    }

    /// The background service that flushes every `interval`, and once more at shutdown.
    public func service(interval: Duration = .seconds(1), logger: Logger) -> some Service {
        FlushService(reporter: self, interval: interval, logger: logger)
    }

    private struct FlushService: Service {
        let reporter: RelationshipReporter
        let interval: Duration
        let logger: Logger

        func run() async throws {
            while !Task.isShuttingDownGracefully && !Task.isCancelled {
                try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
                await reporter.flush(logger: logger)
            }
        }
    }
}
