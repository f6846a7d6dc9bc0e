import Foundation
import LayerModels
import LayerServer
import Logging
import NIOCore

/// Data exports: archives of the app's events, encrypted for the RSA public key the app
/// registered, built in the background (see ``ExportWorker``) at the backend's request or daily,
/// and read back a piece at a time.
struct Exports: Sendable {
    private let repositories: SyncRepositories
    /// Wakes this replica's ``ExportWorker``.
    private let requests: Alarm

    init(repositories: SyncRepositories, requests: Alarm) {
        self.repositories = repositories
        self.requests = requests
    }

    /// Registers (or replaces) the key archives are encrypted for, as PEM.
    func setPublicKey(_ pem: String, _ scope: Scope) async throws {
        try await repositories.exports.setPublicKey(app: scope.app, pem: pem, logger: scope.logger)
    }

    /// The registered key, as PEM; nil when there is none.
    func publicKey(_ scope: Scope) async throws -> String? {
        try await repositories.exports.publicKey(app: scope.app, logger: scope.logger)
    }

    /// Asks for an export of every event up to now, `pending` until a worker takes it. 409
    /// `conflict` (with that export in `data`) while the app's previous one is still pending or
    /// executing.
    func create(_ scope: Scope) async throws -> ExportObject {
        switch try await repositories.exports.createHistoricalExport(app: scope.app, logger: scope.logger) {
        case .created(let record):
            requests.ring()
            return ExportObject(record, app: scope.app, urls: scope.urls)
        case .running(let record):
            throw APIError(
                .conflict, "An export of this app is pending or executing already; wait for it to complete.",
                data: try jsonValue(ExportObject(record, app: scope.app, urls: scope.urls)))
        }
    }

    func list(paging: Paging, _ scope: Scope) async throws -> Page<ExportObject> {
        let (records, total) = try await repositories.exports.exports(
            app: scope.app, fromID: paging.fromID, pageSize: paging.pageSize, logger: scope.logger)
        return Page(items: records.map { ExportObject($0, app: scope.app, urls: scope.urls) }, total: total)
    }

    func export(_ id: UUID, _ scope: Scope) async throws -> ExportObject {
        ExportObject(try await record(id, scope), app: scope.app, urls: scope.urls)
    }

    func delete(_ id: UUID, _ scope: Scope) async throws {
        guard try await repositories.exports.deleteExport(app: scope.app, id: id, logger: scope.logger) else {
            throw APIError.notFound("The export")
        }
    }

    /// The archive of a completed export: its size and its stored pieces, one at a time.
    func archive(of id: UUID, _ scope: Scope) async throws -> (size: Int64, piece: @Sendable (Int32) async throws -> ByteBuffer) {
        let record = try await record(id, scope)
        guard record.status == .completed, let size = record.size else {
            throw APIError(.invalidOperation, "The export is \(record.status.rawValue); its archive is not ready.")
        }
        let (exports, logger) = (repositories.exports, scope.logger)
        return (
            size,
            { ordinal in
                guard let chunk = try await exports.chunk(export: id, ordinal: ordinal, logger: logger) else {
                    // Deleted meanwhile, or incomplete: the headers are gone, so the response is cut short.
                    logger.error("A stored export is missing a piece", metadata: ["export": "\(id)", "ordinal": "\(ordinal)"])
                    throw APIError(.notFound, "The export's archive is gone.")
                }
                return chunk
            }
        )
    }

    private func record(_ id: UUID, _ scope: Scope) async throws -> ExportRecord {
        guard let record = try await repositories.exports.export(app: scope.app, id: id, logger: scope.logger) else {
            throw APIError.notFound("The export")
        }
        return record
    }

    /// Sets which events the daily export holds and whether it runs. A daily export needs at
    /// least one event and a registered key.
    func setSchedule(interval: ExportInterval, events: [String], _ scope: Scope) async throws -> ExportScheduleObject {
        if interval == .daily {
            guard !events.isEmpty else { throw APIError.invalid("events", "A daily export needs at least one event.") }
            guard try await publicKey(scope) != nil else {
                throw APIError(
                    .invalidOperation, "Register an RSA public key with PUT /apps/<app>/export_security first.",
                    property: "public_key")
            }
        }
        let schedule = try await repositories.exports.setSchedule(
            app: scope.app, interval: interval, events: events, logger: scope.logger)
        requests.ring()
        return ExportScheduleObject(schedule)
    }

    func schedule(_ scope: Scope) async throws -> ExportScheduleObject {
        ExportScheduleObject(try await repositories.exports.schedule(app: scope.app, logger: scope.logger))
    }
}
