import Foundation
import HTTPTypes
import Hummingbird
import LayerModels
import LayerServer

/// Paging of the list routes: `page_size` (1…100, default 100) and `from_id`.
struct Paging {
    var pageSize: Int
    var fromID: UUID?

    init(_ request: Request, collection: LayerID.Collection) throws {
        let query = request.uri.queryParameters
        pageSize = 100
        if let text = query["page_size"] {
            guard let size = Int(String(text)), (1...100).contains(size) else {
                throw APIError.invalid("page_size", "page_size is a whole number from 1 to 100.")
            }
            pageSize = size
        }
        if let text = query["from_id"] {
            let raw = String(text)
            guard let id = LayerID(parsing: raw.removingPercentEncoding ?? raw, as: collection) else {
                throw APIError.invalid("from_id", "from_id is a \(collection.rawValue) id.")
            }
            fromID = id.uuid
        }
    }
}

extension Response {
    /// A list with its total in `Layer-Count`.
    static func list(_ items: some Encodable, total: Int) throws -> Response {
        var response = try Response.json(items)
        response.headers[.layerCount] = String(total)
        return response
    }
}

extension HTTPField.Name {
    static let layerCount = Self("Layer-Count")!
    static let ifNoneMatch = Self("If-None-Match")!
}

extension Request {
    /// The base of the URLs in response objects: the configured public URL, or this request's host.
    func urls(publicBaseURL: String?, tls: Bool) -> URLBuilder {
        if let publicBaseURL { return URLBuilder(base: publicBaseURL) }
        let host = head.authority ?? "localhost"
        return URLBuilder(base: "\(tls ? "https" : "http")://\(host)")
    }

    /// `mode` of a deletion: `all_participants` or `my_devices` (`destroy=true` is the old
    /// spelling of `all_participants`).
    func deletionMode() throws -> SyncStore.DeletionMode {
        let query = uri.queryParameters
        if let mode = query["mode"] {
            guard let parsed = SyncStore.DeletionMode(rawValue: String(mode)) else {
                throw APIError.invalid("mode", "mode is all_participants or my_devices.")
            }
            return parsed
        }
        if query["destroy"].map(String.init) == "true" { return .allParticipants }
        throw APIError(.missingProperty, "A deletion needs mode=all_participants or mode=my_devices.", property: "mode")
    }

    func booleanQuery(_ name: String) throws -> Bool {
        guard let value = uri.queryParameters[Substring(name)] else { return false }
        switch value.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw APIError.invalid(name, "\(name) is true or false.")
        }
    }
}
