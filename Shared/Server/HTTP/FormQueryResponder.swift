import Hummingbird

/// Reads a query string as browsers and most HTTP libraries write it: a space as `+` (the form
/// encoding), besides `%XX`. The router's query parameters decode only `%XX`, so before any route
/// reads them each `+` of the query is rewritten `%20`; a plus sign itself comes as `%2B`.
public struct FormQueryResponder<Base: HTTPResponder>: HTTPResponder {
    public typealias Context = Base.Context
    let base: Base

    public init(_ base: Base) {
        self.base = base
    }

    public func respond(to request: Request, context: Context) async throws -> Response {
        guard let path = request.head.path, let mark = path.firstIndex(of: "?"), path[mark...].contains("+") else {
            return try await base.respond(to: request, context: context)
        }
        var head = request.head
        head.path = String(path[..<mark]) + path[mark...].replacingOccurrences(of: "+", with: "%20")
        return try await base.respond(to: Request(head: head, body: request.body), context: context)
    }
}
