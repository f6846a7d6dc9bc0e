import HTTPTypes
import Hummingbird
import LayerModels

/// Requires `Accept: application/vnd.layer+json; version=X.Y` naming one of the versions a group
/// of routes serves, and renders the request's answer in that version (``APIVersion/current``).
/// Any other version, or none, is answered with 406 `invalid_header`.
public struct AcceptHeaderMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext

    let versions: [APIVersion]

    /// `versions`: what the routes behind it serve; the Client API's by default.
    public init(versions: [APIVersion] = APIVersion.clientAPI) {
        self.versions = versions
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let version = APIVersion.negotiate(accept: request.headers[values: .accept], among: versions) else {
            let listed = versions.map(\.rawValue).joined(separator: ", ")
            throw APIError(
                .invalidHeader,
                "Invalid Accept header; must be of form application/vnd.layer+json; version=x.y with x.y one of \(listed)",
                data: ["header": "Accept"])
        }
        return try await APIVersion.$current.withValue(version) { try await next(request, context) }
    }
}
