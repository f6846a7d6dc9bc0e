import Crypto
import Foundation
import Hummingbird
import LayerModels
import LayerServer
import _CryptoExtras

/// Data exports (`/apps/:app/export_security`, `/exports`, `/export_schedule`): archives of the
/// app's events, encrypted for the RSA public key the app registered, built in the background
/// (see ``ExportWorker``) and downloaded through the Server API.
extension ServerAPIController {
    // MARK: The public key

    struct ExportSecurityBody: Decodable {
        var publicKey: String?
        enum CodingKeys: String, CodingKey {
            case publicKey = "public_key"
        }
        static let keys: Set<String> = ["public_key"]
    }

    /// Registers (or replaces) the key archives are encrypted for: an RSA public key of 2048 bits
    /// or more, as PEM (`BEGIN PUBLIC KEY` or `BEGIN RSA PUBLIC KEY`) or base64 DER.
    @Sendable func setExportSecurity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let body = try await request.decodeJSON(ExportSecurityBody.self, limit: 16 * 1024, allowedKeys: ExportSecurityBody.keys)
        guard let text = body.publicKey else {
            throw APIError(.missingProperty, "Send the RSA public key as public_key.", property: "public_key")
        }
        let pem = try Self.exportPublicKey(text).pemRepresentation
        try await domain.exports.setPublicKey(pem, scope)
        return try Response.json(ExportSecurityObject(publicKey: pem))
    }

    /// The registered key; `public_key` is null when there is none.
    @Sendable func getExportSecurity(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let key = try await domain.exports.publicKey(try domain.appScope(request, context))
        return try Response.json(ExportSecurityObject(publicKey: key))
    }

    static func exportPublicKey(_ text: String) throws -> _RSA.Encryption.PublicKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            if trimmed.hasPrefix("-----BEGIN") {
                return try _RSA.Encryption.PublicKey(pemRepresentation: normalizedPEM(trimmed) ?? trimmed)
            }
            if let der = Data(base64Encoded: trimmed, options: .ignoreUnknownCharacters), !der.isEmpty {
                return try _RSA.Encryption.PublicKey(derRepresentation: der)
            }
        } catch CryptoKitError.incorrectParameterSize {
            throw APIError.invalid("public_key", "The RSA key must have at least 2048 bits; this one has fewer.")
        } catch {}
        throw APIError.invalid("public_key", "public_key is not an RSA public key in PEM (or base64 DER).")
    }

    /// The PEM block of `text` laid out as RFC 7468 writes it. Keys pasted into JSON often lose
    /// their line breaks (the whole block on one line, or spaces where the newlines were), which
    /// the PEM reader does not accept; the base64 between the markers means the same either way.
    static func normalizedPEM(_ text: String) -> String? {
        let pattern = /^-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----$/.dotMatchesNewlines()
        guard let match = text.wholeMatch(of: pattern), match.1 == match.3 else { return nil }
        let base64 = String(match.2.filter { !$0.isWhitespace })
        var lines: [Substring] = []
        var rest = base64[...]
        while !rest.isEmpty {
            lines.append(rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        return (["-----BEGIN \(match.1)-----"] + lines.map(String.init) + ["-----END \(match.3)-----"]).joined(separator: "\n")
    }

    // MARK: Exports

    /// Asks for an export of every event up to now: 202 with the export, `pending` until a worker
    /// takes it. 422 without a registered key; 409 `conflict` (with that export in `data`) while
    /// the app's previous one is still pending or executing.
    @Sendable func createExport(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let export = try await domain.exports.create(scope)
        var response = try Response.json(export, status: .accepted)
        if let id = LayerID(parsing: export.id, as: .exports)?.uuid {
            response.headers[.location] = "/apps/\(scope.app.lowercased)/exports/\(id.lowercased)"
        }
        return response
    }

    @Sendable func listExports(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        return try Response.list(try await domain.exports.list(paging: try Paging(request, collection: .exports), scope))
    }

    /// `GET …/exports/:export` and its `status_url`.
    @Sendable func getExport(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("export", as: .exports).uuid
        return try Response.json(try await domain.exports.export(id, scope))
    }

    @Sendable func deleteExport(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        try await domain.exports.delete(try context.parameters.layerID("export", as: .exports).uuid, scope)
        return Response(status: .noContent)
    }

    /// The encrypted archive of a completed export, streamed from its stored rows.
    @Sendable func downloadExport(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let id = try context.parameters.layerID("export", as: .exports).uuid
        let (size, piece) = try await domain.exports.archive(of: id, scope)
        let body = ResponseBody(contentLength: Int(size)) { writer in
            var written: Int64 = 0
            var ordinal: Int32 = 0
            while written < size {
                let chunk = try await piece(ordinal)
                written += Int64(chunk.readableBytes)
                ordinal += 1
                try await writer.write(chunk)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/octet-stream", .cacheControl: "private, no-store",
                .contentDisposition: "attachment; filename=\"export-\(id.lowercased).jsonl.gz.enc\"",
                .xContentTypeOptions: "nosniff",
            ],
            body: body)
    }

    // MARK: The schedule

    struct ExportScheduleBody: Decodable {
        var events: [JSONValue]?
        var interval: String?
        static let keys: Set<String> = ["events", "interval"]
    }

    /// Sets which events the daily export holds and whether it runs (`interval`: `daily`, the
    /// default, or `disabled`). A daily export needs a registered key.
    @Sendable func setExportSchedule(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let scope = try domain.appScope(request, context)
        let body = try await request.decodeJSON(ExportScheduleBody.self, allowedKeys: ExportScheduleBody.keys)
        guard let values = body.events else {
            throw APIError(.missingProperty, "Name the events to export in events.", property: "events")
        }
        var events: [String] = []
        for (index, value) in values.enumerated() {
            guard let name = value.stringValue, ExportEvent(rawValue: name) != nil else {
                throw APIError.invalid(
                    "events.\(index)",
                    "events.\(index) is not an event; events are \(ExportEvent.allNames.joined(separator: ", ")).")
            }
            if !events.contains(name) { events.append(name) }
        }
        let interval =
            try body.interval.map { text in
                guard let interval = ExportInterval(rawValue: text) else {
                    throw APIError.invalid("interval", "interval is daily or disabled.")
                }
                return interval
            } ?? .daily
        return try Response.json(try await domain.exports.setSchedule(interval: interval, events: events, scope))
    }

    @Sendable func getExportSchedule(_ request: Request, context: LayerRequestContext) async throws -> Response {
        try Response.json(try await domain.exports.schedule(try domain.appScope(request, context)))
    }
}
