import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore
import PostgresNIO
import ServiceLifecycle

/// Builds data exports in the background, on every replica: it claims an export that waits (or
/// whose worker stopped renewing its lease), writes the encrypted archive while renewing the
/// lease, and completes it; turns due daily schedules into exports; and deletes exports past
/// their expiration. Nothing is lost to a restart: a replica that shuts down hands its export
/// back, and one that dies loses it once its lease runs out; either way another worker builds it
/// again from the beginning. With no work it sleeps until the replica that took a request or a
/// schedule rings its alarm, looking at most every `poll` (for a daily schedule that fell due,
/// an export whose worker died, or a request taken by a replica that is gone).
struct ExportWorker: Service {
    let exports: ExportRepository
    let alarm: Alarm
    let logger: Logger
    var poll: Duration = .seconds(30)
    var maintenanceEvery: Duration = .seconds(60)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var lastMaintenance = ContinuousClock.now - maintenanceEvery
            while !Task.isCancelled {
                do {
                    if ContinuousClock.now - lastMaintenance >= maintenanceEvery {
                        lastMaintenance = .now
                        try await exports.failAbandoned(logger: logger)
                        let pruned = try await exports.pruneExpired(logger: logger)
                        if pruned > 0 { logger.info("Deleted expired exports", metadata: ["count": "\(pruned)"]) }
                    }
                    let work = try await exports.pendingWork(logger: logger)
                    if work.schedules { _ = try await exports.startDueSchedules(logger: logger) }
                    if work.exports || work.schedules, let claimed = try await exports.claim(logger: logger) {
                        await build(claimed)
                        continue
                    }
                } catch {
                    guard !Task.isCancelled else { break }
                    logger.warning("Export worker failed; trying again", metadata: ["error": "\(String(reflecting: error))"])
                }
                await alarm.wait(upTo: poll)
            }
        }
    }

    /// Builds one export under its claim, renewing the lease meanwhile.
    func build(_ claim: ExportRepository.Claimed) async {
        let id = claim.record.id
        var metadata: Logger.Metadata = ["export": "\(id)", "app": "\(claim.appID)", "attempt": "\(claim.attempt)"]
        logger.debug("Building an export", metadata: metadata)
        do {
            let completed = try await withThrowingTaskGroup(of: Bool?.self) { group in
                group.addTask { try await write(claim) }
                group.addTask {
                    // Keeps the claim; gives up (and stops the build) once it is lost.
                    while true {
                        try await Task.sleep(for: .seconds(ExportRepository.lease / 3))
                        guard try await exports.renew(claim, logger: logger) else { return false }
                    }
                }
                let first = try await group.next()!
                group.cancelAll()
                return first
            }
            metadata["completed"] = "\(completed ?? false)"
            logger.info("Export finished", metadata: metadata)
        } catch  where error is CancellationError || Task.isCancelled {
            // Shutting down (or the claim was lost): another worker takes it up at once. Detached,
            // since this task is cancelled; the pool shuts down after the worker.
            let exports = exports
            let logger = logger
            await Task.detached { try? await exports.handBack(claim, logger: logger) }.value
        } catch {
            logger.error("Export failed", metadata: metadata.merging(["error": "\(String(reflecting: error))"]) { $1 })
            try? await exports.release(claim, error: "The export could not be built; it is tried again.", logger: logger)
        }
    }

    /// Writes the archive; true when it completed, false when the claim was lost on the way.
    private func write(_ claim: ExportRepository.Claimed) async throws -> Bool? {
        try await exports.clearChunks(claim, logger: logger)
        var ordinal: Int32 = 0
        var owned = true
        let archive = try ExportArchiveWriter { piece in
            guard owned else { return }
            owned = try await exports.storeChunk(claim, ordinal: ordinal, data: piece, logger: logger)
            ordinal += 1
            if !owned { throw CancellationError() }
        }
        let record = claim.record
        try await exports.events(
            app: claim.appID, events: record.events.compactMap(ExportEvent.init(rawValue:)), since: record.since,
            until: record.until, logger: logger
        ) { row in
            try await archive.append(ExportLine(row))
        }
        try await archive.finish()
        return try await exports.complete(
            claim, encryptedKey: try archive.wrappedKey(for: record.publicKey), iv: archive.ivBase64, size: archive.size,
            eventCount: archive.eventCount, logger: logger)
    }
}
