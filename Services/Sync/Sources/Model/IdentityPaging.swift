import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The paging of the lists of followed users (`GET /identities`, `GET /following`): `page_size`
/// up to 500, the default too, as the original's identity lists (the SDKs' identity queries ask
/// for up to 500 at once and take a shorter page for the end of the list), and `from_id`, a user
/// id or an identity id, of someone in the list.
struct IdentityPaging: Sendable {
    static let maxPageSize = 500
    var pageSize = IdentityPaging.maxPageSize
    var fromUser: String?

    init(pageSize: Int = IdentityPaging.maxPageSize, fromUser: String? = nil) {
        self.pageSize = pageSize
        self.fromUser = fromUser
    }

    /// 422 naming the parameter when one is malformed.
    init(_ request: Request) throws {
        let query = request.uri.queryParameters
        if let text = query["page_size"] {
            guard let size = Int(String(text)), (1...Self.maxPageSize).contains(size) else {
                throw APIError.invalid("page_size", "page_size is a whole number from 1 to \(Self.maxPageSize).")
            }
            pageSize = size
        }
        if let text = query["from_id"] {
            fromUser = try IdentityReference.userID(String(text), property: "from_id")
        }
    }
}
