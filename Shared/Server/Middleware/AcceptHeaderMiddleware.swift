import HTTPTypes
import Hummingbird
import LayerModels

/// Requires `Accept: application/vnd.layer+json; version=X.Y` naming one of the versions a group
/// of routes serves, and renders the request's answer in that version (``APIVersion/current``).
/// Any other version, or none, is answered with 406 `invalid_header`.
public struct AcceptHeaderMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext

    let versions: [APIVersion]
    /// The media types that may name the version, the first in the error's advice.
    let mediaTypes: [String]

    /// `versions`: what the routes behind it serve; the Client API's by default.
    public init(versions: [APIVersion] = APIVersion.clientAPI, mediaTypes: [String] = [APIVersion.layerMediaType]) {
        self.versions = versions
        self.mediaTypes = mediaTypes
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard
            let version = APIVersion.negotiate(
                accept: request.headers[values: .accept], among: versions, mediaTypes: mediaTypes)
        else {
            let listed = versions.map(\.rawValue).joined(separator: ", ")
            throw APIError(
                .invalidHeader,
                "Invalid Accept header; must be of form \(mediaTypes[0]); version=x.y with x.y one of \(listed)",
                data: ["header": "Accept"])
        }
        return try await APIVersion.$current.withValue(version) { try await next(request, context) }
    }
}
