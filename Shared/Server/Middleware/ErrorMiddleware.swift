import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import Logging
import PostgresNIO

/// Renders every error of the routes in the API's shape. Anything that is not a client's fault is
/// logged in full and answered with an opaque 500. (The request's id, in its logs and its answer,
/// is given outside, by ``RequestIdentityResponder``.)
public struct ErrorMiddleware: RouterMiddleware {
    public typealias Context = LayerRequestContext
    let routes: RouteTable

    public init(routes: RouteTable) {
        self.routes = routes
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return try render(error, request: request, context: context)
        }
    }

    func render(_ error: any Error, request: Request, context: Context) throws -> Response {
        try apiError(for: error, request: request, context: context).response(from: request, context: context)
    }

    /// The API error a failure is answered with; unexpected failures are logged here.
    public func apiError(for error: any Error, request: Request, context: Context) -> APIError {
        var apiError: APIError
        switch error {
        case let error as APIError:
            apiError = error
        case let error as DecodingError:
            apiError = APIError(decoding: error)
        case let error as PSQLError where error.sqlState == "22021" || error.sqlState == "22P05":
            // Text PostgreSQL cannot store (a NUL character): the client's input, not our fault.
            apiError = APIError(.invalidRequest, "Text values must not contain NUL characters.")
        case let error as any HTTPResponseError:
            apiError = APIError(status: error.status, request: request, context: context)
            if apiError.body.id == ErrorID.invalidEndpoint.rawValue {
                let allowed = routes.methods(for: request.uri.path)
                if !allowed.isEmpty {
                    let allow = allowed.map(\.rawValue).sorted().joined(separator: ", ")
                    apiError = APIError(
                        .methodNotAllowed, "\(request.method.rawValue) is not supported here; use \(allow).",
                        headers: [.allow: allow])
                }
            }
        case let error where DatabaseFailure.isUnavailable(error):
            // A restarting or overloaded database: the client may retry in a moment.
            context.logger.warning(
                "Database unavailable",
                metadata: ["error": "\(String(reflecting: error))", "route": "\(context.endpointPath ?? "?")"])
            apiError = APIError(
                .serviceUnavailable, "The database is unavailable; try again shortly.", headers: [.retryAfter: "1"])
        case is DeadlineExceeded:
            apiError = APIError(
                .serviceUnavailable, "The request did not complete in time; try again.", headers: [.retryAfter: "1"])
        default:
            context.logger.error(
                "Unexpected error",
                // The route's pattern, not the path: a path may hold a secret (DELETE /sessions/<token>).
                metadata: ["error": "\(String(reflecting: error))", "route": "\(context.endpointPath ?? "?")"])
            apiError = APIError(.internalServerError, "An unexpected error occurred; it has been logged.")
        }
        if apiError.status.code >= 500, apiError.body.id == ErrorID.internalServerError.rawValue {
            context.logger.error("Request failed", metadata: ["status": "\(apiError.status.code)"])
        }
        return apiError
    }
}

extension APIError {
    /// The API's error for a bare HTTP status raised by the framework.
    init(status: HTTPResponse.Status, request: Request, context: LayerRequestContext) {
        switch status.code {
        case 404 where context.endpointPath == "NotFound" || context.endpointPath == nil:
            self.init(.invalidEndpoint, "There is no endpoint \(request.method.rawValue) \(request.uri.path).")
        case 404: self.init(.notFound, "The resource was not found.")
        case 405: self.init(.methodNotAllowed, "\(request.method.rawValue) is not supported here.")
        case 408: self.init(.requestTimeout, "The request timed out.")
        case 413: self.init(.requestTooLarge, "The request body is too large.")
        case 429: self.init(.rateLimitExceeded, "Too many requests; slow down.")
        case 503: self.init(.serviceUnavailable, "The service is unavailable.")
        case 400..<500: self.init(.invalidRequest, "The request is invalid (\(status.reasonPhrase)).")
        default: self.init(.internalServerError, "An unexpected error occurred; it has been logged.")
        }
    }
}

extension HTTPField.Name {
    public static let requestID = Self(LayerHeader.requestID)!
    public static let layerUserID = Self(LayerHeader.userID)!
    public static let layerSessionToken = Self(LayerHeader.sessionToken)!
    public static let layerSessionTTL = Self(LayerHeader.sessionTTL)!
    public static let clientCertificate = Self(LayerHeader.clientCertificate)!
    public static let methodOverride = Self("X-HTTP-Method-Override")!
    public static let link = Self("Link")!
    public static let forwardedProto = Self("X-Forwarded-Proto")!
    public static let forwardedHost = Self("X-Forwarded-Host")!
    public static let xForwardedFor = Self("X-Forwarded-For")!
}
