import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The outermost responder of every listener: gives each request its id once — the caller's
/// `X-Request-Id` when it is a sane one, a new UUID otherwise — puts it in the logger every layer
/// inside logs with, and returns it on every answer (the preflights, the refusals and the
/// deadline's 503 among them), so that an answer always names the logs of its work.
public struct RequestIdentityResponder<Base: HTTPResponder>: HTTPResponder where Base.Context == LayerRequestContext {
    public typealias Context = LayerRequestContext
    let base: Base

    public init(_ base: Base) {
        self.base = base
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        var context = context
        let id = Self.id(given: request.headers[.requestID])
        context.logger[metadataKey: "request_id"] = .string(id)
        var response = try await base.respond(to: request, context: context)
        response.headers[.requestID] = id
        return response
    }

    /// The caller's id when it is 1 to 128 letters, digits, `-`, `_` and `.`; a new one otherwise.
    static func id(given: String?) -> String {
        if let given, (1...128).contains(given.count),
            given.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) })
        {
            return given
        }
        return UUID().lowercased
    }
}
