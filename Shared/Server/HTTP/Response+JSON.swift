import HTTPTypes
import Hummingbird
import LayerModels
import NIOCore

extension Response {
    /// A JSON response in the suite's wire format.
    public static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(status: status, headers: [.contentType: MediaType.json], body: .init(byteBuffer: try .json(value)))
    }
}
