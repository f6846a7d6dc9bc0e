import Foundation

/// A version of the public API, chosen per request with
/// `Accept: application/vnd.layer+json; version=X.Y` and per WebSocket with the `layer-X.Y`
/// subprotocol. Every version is rendered from the same objects; only their JSON differs
/// (reference 1.1, 4.1, 5.4, 6.1):
///
/// - 1.x: participants, senders, recipients and `recipient_status` keys are user ids, a sender is
///   `{"user_id"}` or `{"name"}`, change packets that patch an object say `patch`;
/// - 2.0: identities in their place (BasicIdentity objects, `layer:///identities/…` ids);
/// - 3.0: message parts get their own UUIDs (before, `…/parts/<index>`).
///
/// 1.1 exists only in the Server API, where it changed the push notification format; it renders
/// as 1.0 does.
// swift-format-ignore: AlwaysUseLowerCamelCase
// The cases are named after the versions they are.
public enum APIVersion: String, Sendable, Hashable, Comparable, CaseIterable {
    case v1_0 = "1.0"
    case v1_1 = "1.1"
    case v2_0 = "2.0"
    case v3_0 = "3.0"

    /// The version being rendered: set for a request by `AcceptHeaderMiddleware`, and by the push
    /// service around what it renders for a device. 3.0 where nobody chose.
    @TaskLocal public static var current: APIVersion = .v3_0

    /// The versions of the Client API (and of Layerline's own APIs that descend from it).
    public static let clientAPI: [APIVersion] = [.v1_0, .v2_0, .v3_0]
    /// The versions of the Server API.
    public static let serverAPI: [APIVersion] = [.v1_0, .v1_1, .v2_0, .v3_0]
    /// Layerline's own APIs (names, calls), which began at 3.0.
    public static let layerline: [APIVersion] = [.v3_0]

    /// 2.0 and later name users by identity; 1.x by user id.
    public var usesIdentities: Bool { self >= .v2_0 }
    /// 3.0 and later address message parts by UUID; earlier versions by index.
    public var hasPartIDs: Bool { self >= .v3_0 }
    /// The operation of a change packet that patches an object: `patch` in 1.0, `update` after.
    public var updateOperation: String { usesIdentities ? "update" : "patch" }

    public static func < (lhs: APIVersion, rhs: APIVersion) -> Bool {
        lhs.rawValue.compare(rhs.rawValue, options: .numeric) == .orderedAscending
    }

    /// The media type of the Client and Server APIs.
    public static let layerMediaType = "application/vnd.layer+json"
    /// The media type of the webhooks API, which also takes ``layerMediaType``.
    public static let webhooksMediaType = "application/vnd.layer.webhooks+json"

    /// The best of `supported` that the `Accept` header values allow, or nil: a value may list
    /// several media ranges, each one of `mediaTypes` with a version (one without allows none).
    public static func negotiate(
        accept values: [String], among supported: [APIVersion], mediaTypes: [String] = [layerMediaType]
    ) -> APIVersion? {
        var best: APIVersion?
        for value in values {
            for range in value.split(separator: ",") {
                let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard let type = parts.first, mediaTypes.contains(type) else { continue }
                guard let text = parts.dropFirst().first(where: { $0.hasPrefix("version=") })?.dropFirst("version=".count)
                else { continue }
                let unquoted = text.trimmingCharacters(in: .init(charactersIn: "\""))
                if let version = APIVersion(rawValue: unquoted), supported.contains(version),
                    version > (best ?? .v1_0) || best == nil
                {
                    best = version
                }
            }
        }
        return best
    }
}
