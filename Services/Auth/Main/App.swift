import LayerAuth
import LayerServer

/// `layer-auth`: the auth service on its own, configured by the environment.
@main
struct AuthMain {
    static func main() async throws {
        try await ServiceMain.run(AuthService.self)
    }
}
