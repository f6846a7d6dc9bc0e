import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import NIOCore

/// An error a client can cause: rendered as the API's error shape with the status of its id.
public struct APIError: HTTPResponseError, Sendable {
    public var body: ErrorBody
    public var headers: HTTPFields

    public init(_ id: ErrorID, _ message: String, data: JSONValue? = nil, headers: HTTPFields = [:]) {
        self.body = ErrorBody(id, message: message, data: data)
        self.headers = headers
    }

    /// An error about one property of the request, named in `data.property`.
    public init(_ id: ErrorID, _ message: String, property: String, extra: [String: JSONValue] = [:]) {
        var data = extra
        data["property"] = .string(property)
        self.init(id, message, data: .object(data))
    }

    public var status: HTTPResponse.Status { .init(code: ErrorID(rawValue: body.id)?.status ?? 500) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let buffer = try ByteBuffer.json(body)
        var headers = self.headers
        headers[.contentType] = MediaType.json
        return Response(status: status, headers: headers, body: .init(byteBuffer: buffer))
    }

    public static func notFound(_ what: String) -> APIError {
        APIError(.notFound, "\(what) was not found.")
    }

    public static func invalid(_ property: String, _ message: String) -> APIError {
        APIError(.invalidProperty, message, property: property)
    }
}
