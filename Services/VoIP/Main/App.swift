import LayerServer
import LayerVoIP

/// `layer-voip`: the VoIP signalling service and its STUN server on their own, configured by the
/// environment. It reaches the auth service at LAYER_AUTH_URL and the sync service at
/// LAYER_SYNC_URL.
@main
struct VoIPMain {
    static func main() async throws {
        try await ServiceMain.run(VoIPService.self)
    }
}
