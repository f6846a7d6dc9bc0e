import Foundation
import Hummingbird
import LayerModels
import LayerServer
import NameMatching

/// What other services of the suite report, with the internal token: who messaged or called whom.
struct InternalController: Sendable {
    let relationships: RelationshipRepository

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.post("relationships", use: record)
    }

    @Sendable func record(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let report = try await request.decodeJSON(InternalAPI.Relationships.self, limit: 4 * 1024 * 1024)
        let pairs = try await relationships.record(app: report.appID, report.events, logger: context.logger)
        return try Response.json(InternalAPI.Relationships.Answer(pairs: pairs))
    }
}

/// The app's settings of this service, for its backend: `GET`/`PUT /apps/<app>/names/settings`
/// with `{"default_region": "GB"}`, the region whose numbering national phone numbers are read in.
struct SettingsController: Sendable {
    let directory: Directory

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("names/settings", use: get)
        router.put("names/settings", use: put)
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let app = try context.parameters.layerID("app", as: .apps).uuid
        return try Response.json(
            ["default_region": .string(try await directory.region(app, logger: context.logger))] as JSONValue)
    }

    @Sendable func put(_ request: Request, context: LayerRequestContext) async throws -> Response {
        struct Body: Decodable {
            var defaultRegion: String
            enum CodingKeys: String, CodingKey { case defaultRegion = "default_region" }
        }
        let app = try context.parameters.layerID("app", as: .apps).uuid
        let region = try await request.decodeJSON(Body.self, allowedKeys: ["default_region"]).defaultRegion.uppercased()
        guard AddressNormalizer.isKnownRegion(region) else {
            throw APIError.invalid(
                "default_region",
                "'\(region)' is not a region whose phone numbers are known (ISO 3166 alpha-2, such as US or GB).")
        }
        try await directory.setRegion(app, region, logger: context.logger)
        return try Response.json(["default_region": .string(region)] as JSONValue)
    }
}
