import HTTPTypes
import Hummingbird
import Synchronization

/// The routes a server has, so that a request for a path that exists with another method is
/// answered 405 `method_not_allowed` with an `Allow` header rather than 404. (The router itself
/// only knows "no handler".)
public final class RouteTable: Sendable {
    private let routes = Mutex<[(components: [RouterPath.Element], method: HTTPRequest.Method)]>([])

    public init() {}

    /// Takes the routes of a router once all of them are registered.
    public func load<Context>(_ router: Router<Context>) {
        let described = router.routes.map { ($0.path.components, $0.method) }
        routes.withLock { $0 = described }
    }

    /// The methods served at `path`, empty when no route matches it.
    public func methods(for path: String) -> Set<HTTPRequest.Method> {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.withLock { routes in
            Set(
                routes.filter { route in
                    route.components.count == segments.count
                        && zip(route.components, segments).allSatisfy { element, segment in element ~= segment }
                }.map(\.method))
        }
    }
}
