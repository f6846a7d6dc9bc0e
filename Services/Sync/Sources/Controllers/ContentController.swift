import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// Rich content: `POST /content`, the signed upload and download URLs, `GET /content/:id`.
struct ContentController: Sendable {
    let service: SyncContext
    let maxBytes: Int

    /// Session-authenticated routes.
    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
    }

    /// Routes authenticated by their signed URL instead of a session.
    func addSignedRoutes(to router: Router<LayerRequestContext>) {
    }
}
