import LayerAuth
import LayerNames
import LayerServer
import LayerSync
import LayerVoIP

/// The catalogue of the suite: every service, in the order in which they migrate and start.
/// `layer dev`, `layer migrate`, `layer openapi`, the test support and the benchmarks all compose
/// the suite from this list; adding a service is adding it here.
public enum Suite {
    public static let services: [any ConfigurableService.Type] = [
        AuthService.self, SyncService.self, NamesService.self, VoIPService.self,
    ]

    /// Every service configured from the environment of `reader` (problems collect in `reader`).
    public static func configured(from reader: inout SettingsReader) -> [ServicePlan] {
        services.map { $0.configured(from: &reader) }
    }

    /// Each service's OpenAPI document, in catalogue order; no service is built for it.
    public static var openAPIDocuments: [(name: String, document: String)] {
        services.map { ($0.name, $0.openAPI) }
    }
}
