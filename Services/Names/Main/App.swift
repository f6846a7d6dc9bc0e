import LayerNames
import LayerServer

/// `layer-names`: the name resolution service on its own, configured by the environment. It
/// reaches the auth service at LAYER_AUTH_URL.
@main
struct NamesMain {
    static func main() async throws {
        try await ServiceMain.run(NamesService.self)
    }
}
