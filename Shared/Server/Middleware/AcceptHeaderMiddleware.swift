import HTTPTypes
import Hummingbird
import LayerModels

/// Requires `Accept: application/vnd.layer+json; version=3.0` on the public API; any other
/// version, or none, is answered with 406 `invalid_header`.
public struct AcceptHeaderMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext

    public init() {}

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard Self.accepts(request.headers[values: .accept]) else {
            throw APIError(
                .invalidHeader,
                "Invalid Accept header; must be of form application/vnd.layer+json; version=\(MediaType.apiVersion)",
                data: ["header": "Accept"])
        }
        return try await next(request, context)
    }

    /// True when one of the listed media ranges is the Layer media type at the supported version.
    static func accepts(_ values: [String]) -> Bool {
        for value in values {
            for range in value.split(separator: ",") {
                let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                guard parts.first == "application/vnd.layer+json" else { continue }
                let version = parts.dropFirst().first { $0.hasPrefix("version=") }?.dropFirst("version=".count)
                if let version, version.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == MediaType.apiVersion {
                    return true
                }
            }
        }
        return false
    }
}

import Foundation
