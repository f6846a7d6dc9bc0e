import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// The Server API of the sync service (`/apps/:app/…`, bearer Server API token).
struct ServerAPIController: Sendable {
    let service: SyncContext
    let appTokens: any AppTokenVerifier

    func addRoutes(to router: Router<LayerRequestContext>) {
    }
}
