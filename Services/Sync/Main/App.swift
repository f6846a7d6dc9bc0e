import LayerServer
import LayerSync

/// `layer-sync`: the sync service on its own, configured by the environment. It reaches the auth
/// service at LAYER_AUTH_URL.
@main
struct SyncMain {
    static func main() async throws {
        try await ServiceMain.run(SyncService.self)
    }
}
