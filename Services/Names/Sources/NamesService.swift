import Foundation
import Hummingbird
import LayerModels
import LayerServer
import Logging
import NameMatching

/// The name resolution service: persons and their addresses, address books, visibility policy
/// and relationships. It checks sessions and Server API tokens with the auth service over
/// internal HTTP and never reads another service's schema.
public struct NamesService: ConfigurableService {
    public static let name = InternalAPI.Service.names
    public static let defaultPort = 8083
    public static var migrations: MigrationRunner { namesMigrations }
    public static let openAPI = OpenAPISpec.serviceDocument(PackageResources.openapi_yaml, service: "names")

    let settings: NamesSettings

    public init(settings: NamesSettings, dependencies: ServiceDependencies) {
        self.settings = settings
    }

    public func addRoutes(to router: Router<LayerRequestContext>) {}
}
