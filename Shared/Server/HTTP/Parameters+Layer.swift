import Foundation
import Hummingbird
import LayerModels

extension Parameters {
    /// A path parameter holding a Layer id, as the bare UUID or the (URL-encoded) full URI.
    public func layerID(_ name: String, as collection: LayerID.Collection) throws -> LayerID {
        let raw = self.get(name) ?? ""
        let text = raw.removingPercentEncoding ?? raw
        guard let id = LayerID(parsing: text, as: collection) else {
            throw APIError(.notFound, "'\(text)' is not a \(collection.rawValue) id.")
        }
        return id
    }

    /// A percent-decoded path parameter, such as an app's user id.
    public func decoded(_ name: String) -> String {
        let raw = self.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }
}
