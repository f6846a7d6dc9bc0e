import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import PostgresNIO

/// De-duplication of Server API creates with `If-None-Match: <uuid>`: the tag a request carries.
/// (``RequestTags`` reserves ids for them.)
///
/// The first request with a tag reserves an id for the resource it is about to create and
/// records it under the tag (committed at once, in `sync.request_tags`); the create then uses
/// that id. A repeat of the tag finds the recorded id: if the resource exists, it is answered
/// with it and nothing is executed; if not (the first request failed, or is still running, or
/// the process stopped in between), the create runs again under the same id, and the store's
/// own uniqueness on that id makes sure only one resource ever comes of it.
enum RequestTag {
    /// The tag of a request, nil without `If-None-Match`. A tag is a UUID, optionally quoted as
    /// an entity tag (`"…"`); anything else is a 400 naming the header.
    static func read(_ request: Request) throws -> UUID? {
        guard let raw = request.headers[.ifNoneMatch] else { return nil }
        var text = raw.trimmingCharacters(in: .whitespaces)
        if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = String(text.dropFirst().dropLast()) }
        guard let tag = UUID(uuidString: text) else {
            throw APIError(
                .invalidRequest, "If-None-Match is a request tag: a UUID such as \(UUID().lowercased).",
                data: ["header": "If-None-Match"])
        }
        return tag
    }
}
