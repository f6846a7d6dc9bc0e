import Foundation
import HTTPTypes
import Hummingbird
import LayerModels

/// Paging of a list route: `page_size` (1…100, default 100) and `from_id`, the id of the last
/// item of the previous page, of the list's own kind.
public struct Paging: Sendable {
    public static let maxPageSize = 100
    public var pageSize: Int
    public var fromID: UUID?

    public init(pageSize: Int = Paging.maxPageSize, fromID: UUID? = nil) {
        self.pageSize = pageSize
        self.fromID = fromID
    }

    /// The paging a request asks for; 422 naming the parameter when it is malformed.
    public init(_ request: Request, collection: LayerID.Collection) throws {
        let query = request.uri.queryParameters
        self.init()
        if let text = query["page_size"] {
            guard let size = Int(String(text)), (1...Self.maxPageSize).contains(size) else {
                throw APIError.invalid("page_size", "page_size is a whole number from 1 to \(Self.maxPageSize).")
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

/// One page of a list and the size of the whole list.
public struct Page<Item: Sendable>: Sendable {
    public var items: [Item]
    public var total: Int

    public init(items: [Item], total: Int) {
        self.items = items
        self.total = total
    }
}

extension Response {
    /// A page as a JSON array, with the whole list's size in `Layer-Count`.
    public static func list<Item: Encodable>(_ page: Page<Item>) throws -> Response {
        var response = try Response.json(page.items)
        response.headers[.layerCount] = String(page.total)
        return response
    }
}

extension HTTPField.Name {
    public static let layerCount = Self("Layer-Count")!
}

extension LayerID {
    /// The id a client chose for an object it creates: a bare UUID or the full Layer URI of
    /// `collection`; nil when it chose none. 422 naming `property` when it is neither.
    public static func clientChosen(_ text: String?, as collection: Collection, property: String = "id") throws -> UUID? {
        guard let text else { return nil }
        guard let id = LayerID(parsing: text, as: collection) else {
            throw APIError.invalid(
                property, "'\(text)' is not a \(collection.rawValue) id (a UUID or layer:///\(collection.rawValue)/<uuid>).")
        }
        return id.uuid
    }
}

/// Where the objects of a response point their `url` fields: the public base URL of the suite.
public struct URLBuilder: Sendable {
    public let base: String
    /// Set when rendering for the Server API of this app: objects then name their Server API
    /// paths (`/apps/<app>/conversations/<id>`), which the app's bearer token may follow, instead
    /// of the Client API's.
    public var serverAPIApp: UUID?

    public init(base: String, serverAPIApp: UUID? = nil) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.serverAPIApp = serverAPIApp
    }

    /// The URL of a path of the public API (`/conversations/<id>`).
    public func url(_ path: String) -> String { base + path }
}

extension Request {
    /// The base of the URLs in response objects: the configured public URL, or where the client
    /// addressed this request (through a trusted edge: the scheme and host it forwarded).
    public func urls(publicBaseURL: String?, tls: Bool) -> URLBuilder {
        URLBuilder(base: publicBaseURL ?? clientBaseURL(tls: tls))
    }
}

extension Request {
    /// The query parameter `name`, percent-decoded; nil when absent.
    public func queryText(_ name: String) -> String? {
        uri.queryParameters[Substring(name)].map { String($0).removingPercentEncoding ?? String($0) }
    }

    /// The query parameter `name` as an ISO 8601 time; nil when absent, 422 naming it when it is
    /// not one. The filters of lists (`from`, `to`) read times this way.
    public func queryTime(_ name: String) throws -> Date? {
        guard let value = queryText(name) else { return nil }
        guard let date = LayerTimestamp.date(value) else {
            throw APIError.invalid(name, "\(name) is an ISO 8601 time, such as 2026-11-27T12:00:00Z.")
        }
        return date
    }
}
