import Foundation
import HTTPTypes
import Hummingbird
import LayerModels

extension Request {
    /// Decodes a Layer-Patch body; the content type must be `application/vnd.layer-patch+json`.
    public func decodeLayerPatch(limit: Int = 64 * 1024) async throws -> [LayerPatchOperation] {
        let contentType = headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard contentType == MediaType.layerPatch else {
            throw APIError(
                .invalidHeader, "A PATCH body must have Content-Type: \(MediaType.layerPatch).",
                data: ["header": "Content-Type"])
        }
        let operations = try await decodeJSON([LayerPatchOperation].self, limit: limit)
        for (index, operation) in operations.enumerated() where operation.property.isEmpty {
            throw APIError.invalid("\(index).property", "Patch operation \(index) has an empty property.")
        }
        return operations
    }
}

/// Lets clients that cannot send PATCH send `POST` with `X-HTTP-Method-Override: PATCH`. It wraps
/// the router, because routing chooses the handler by method.
public struct MethodOverrideResponder<Base: HTTPResponder>: HTTPResponder {
    public typealias Context = Base.Context
    let base: Base

    public init(_ base: Base) {
        self.base = base
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        guard request.method == .post, let override = request.headers[.methodOverride],
            let method = HTTPRequest.Method(override.uppercased()), [.patch, .put, .delete].contains(method)
        else {
            return try await base.respond(to: request, context: context)
        }
        var head = request.head
        head.method = method
        return try await base.respond(to: Request(head: head, body: request.body), context: context)
    }
}
