import Foundation
import LayerModels
import LayerServer
import Logging

/// The ids that Server API creates reserve under their `If-None-Match` tags (see ``RequestTag``):
/// the first request with a tag records the id its resource will have, and a repeat finds it.
struct RequestTags: Sendable {
    let repository: RequestTagRepository

    /// The id reserved under `tag` for a new resource of `collection`, now or by an earlier
    /// request. A tag used before for another kind of resource is a 400.
    func reserve(_ tag: UUID, collection: LayerID.Collection, _ scope: Scope) async throws -> UUID {
        let recorded = try await repository.reserve(
            tag, app: scope.app, candidate: LayerID(collection, UUID()).uri, logger: scope.logger)
        guard let id = LayerID(parsing: recorded, as: collection) else {
            throw APIError(
                .invalidRequest, "This If-None-Match tag was used before for another kind of request.",
                data: ["header": "If-None-Match"])
        }
        return id.uuid
    }

    /// Whether the resource a tag reserved exists (the request that reserved it created it).
    func exists(_ id: LayerID, _ scope: Scope) async throws -> Bool {
        try await repository.resourceExists(id, app: scope.app, logger: scope.logger)
    }
}
