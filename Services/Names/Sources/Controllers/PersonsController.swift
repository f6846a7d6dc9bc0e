import Foundation
import Hummingbird
import LayerModels
import LayerServer
import NIOCore

/// The routes of persons, resolution and address books. Users reach them with a session; the
/// app's backend reaches the same paths under `/apps/<app>/…` with a Server API token.
struct PersonsController: Sendable {
    let directory: Directory
    /// Who is asking, from the request's context (session or app token).
    let caller: @Sendable (LayerRequestContext) throws -> Caller
    /// The budgets of a signed-in user: resolutions (`/resolve`, `/route`, a book's duplicates)
    /// and writes. Nil for the app's backend.
    var limits: (resolve: RateLimiter, writes: RateLimiter)? = nil

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        let (resolves, writes) = (limited(router, limits?.resolve, "resolutions"), limited(router, limits?.writes, "writes"))
        router.get("persons/:person", use: get)
        resolves.get("resolve", use: resolve)
        resolves.post("route", use: route)
        router.get("address-books/:book", use: getBook)
        resolves.get("address-books/:book/duplicates", use: bookDuplicates)
        writes.post("address-books/:book/consolidate", use: consolidate)
    }

    /// The imports, which read their body themselves (``ImportDeadline``): their routes' group
    /// reads no body first and sets no deadline (``RequestLimits/streaming``).
    func addImportRoutes(to router: some RouterMethods<LayerRequestContext>) {
        let writes = limited(router, limits?.writes, "writes")
        writes.post("persons", use: add)
        writes.post("persons/deduplicate", use: deduplicate)
        writes.post("address-books", use: createBook)
    }

    /// What only a person's owner does, with a session.
    func addOwnerRoutes(to router: some RouterMethods<LayerRequestContext>) {
        let writes = limited(router, limits?.writes, "writes")
        writes.post("persons/:person/claim", use: claim)
        writes.patch("persons/:person", use: patchPerson)
        writes.patch("persons/:person/addresses/:address", use: patchAddress)
        router.get("persons/:person/entries", use: entries)
        writes.delete("persons/:person/entries/:entry", use: detach)
    }

    private func limited(
        _ router: some RouterMethods<LayerRequestContext>, _ limiter: RateLimiter?, _ what: String
    ) -> RouterGroup<LayerRequestContext> {
        guard let limiter else { return router.group() }
        return router.group().add(middleware: UserRateLimitMiddleware(limiter: limiter, what: what))
    }

    /// Imports read their body here, after authentication (``ImportDeadline``).
    @Sendable func add(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let body = try await request.decodeJSON(JSONValue.self, limit: caller.bodyLimit)
        let (directory, logger) = (directory, context.logger)
        return try await ImportDeadline.run {
            try Self.allowOnly(["persons"], in: body)
            let people = try await directory.reader(caller, logger: logger)
                .read(body["persons"], name: "persons", limit: caller.recordLimit)
            guard !people.isEmpty else { throw APIError.invalid("persons", "persons holds at least one record.") }
            return try Response.json(try await directory.add(people, caller: caller, logger: logger), status: .created)
        }
    }

    @Sendable func deduplicate(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let body = try await request.decodeJSON(JSONValue.self, limit: caller.bodyLimit)
        let (directory, logger) = (directory, context.logger)
        return try await ImportDeadline.run {
            try Self.allowOnly(["existing", "new"], in: body)
            let reader = try await directory.reader(caller, logger: logger)
            let existing =
                body["existing"] == nil ? [] : try reader.read(body["existing"], name: "existing", limit: caller.recordLimit)
            let new = try reader.read(body["new"], name: "new", limit: caller.recordLimit - existing.count)
            return try Response.json(directory.deduplicate(existing: existing, new: new))
        }
    }

    @Sendable func get(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let id = try context.parameters.layerID("person", as: .persons).uuid
        return try Response.json(try await directory.person(id, caller: caller, logger: context.logger))
    }

    @Sendable func resolve(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let region = try await directory.region(caller.app, logger: context.logger)
        let query = request.uri.queryParameters
        guard let raw = query["address"] else {
            throw APIError(.missingProperty, "resolve needs ?address=<type>:<value>.", property: "address")
        }
        let address = try AddressKey.parse(Self.decoded(raw), property: "address", defaultRegion: region)
        let known = try query["known"].map { try AddressKey.parse(Self.decoded($0), property: "known", defaultRegion: region) }
        return try Response.json(try await directory.resolve(address, known: known, caller: caller, logger: context.logger))
    }

    @Sendable func route(_ request: Request, context: LayerRequestContext) async throws -> Response {
        struct Body: Decodable {
            var address: String
            var appID: String
            enum CodingKeys: String, CodingKey {
                case address
                case appID = "app_id"
            }
        }
        let caller = try caller(context)
        let body = try await request.decodeJSON(Body.self, allowedKeys: ["address", "app_id"])
        let address = try AddressKey.parse(
            body.address, property: "address", defaultRegion: try await directory.region(caller.app, logger: context.logger))
        guard let app = LayerID(parsing: body.appID, as: .apps) else {
            throw APIError.invalid("app_id", "app_id is an app id (layer:///apps/<uuid>).")
        }
        return try Response.json(try await directory.route(address, to: app.uuid, caller: caller, logger: context.logger))
    }

    @Sendable func claim(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let id = try context.parameters.layerID("person", as: .persons).uuid
        return try Response.json(try await directory.claim(id, caller: caller, logger: context.logger))
    }

    @Sendable func entries(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let id = try context.parameters.layerID("person", as: .persons).uuid
        return try Response.json(try await directory.entries(id, caller: caller, logger: context.logger))
    }

    @Sendable func detach(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let id = try context.parameters.layerID("person", as: .persons).uuid
        let entry = try context.parameters.layerID("entry", as: .entries).uuid
        return try Response.json(try await directory.detach(id, entry: entry, caller: caller, logger: context.logger))
    }

    @Sendable func patchPerson(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let id = try context.parameters.layerID("person", as: .persons).uuid
        let fields = try await Self.patchFields(request, allowed: ["barred_apps"])
        guard case .array(let list)? = fields["barred_apps"] else {
            throw APIError(.missingProperty, "Set barred_apps, a list of app ids.", property: "barred_apps")
        }
        let apps = try list.map { item in
            guard case .string(let text) = item, let app = LayerID(parsing: text, as: .apps) else {
                throw APIError.invalid("barred_apps", "barred_apps is a list of app ids (layer:///apps/<uuid>).")
            }
            return app.uuid
        }
        return try Response.json(try await directory.setBarredApps(id, apps: apps, caller: caller, logger: context.logger))
    }

    @Sendable func patchAddress(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let id = try context.parameters.layerID("person", as: .persons).uuid
        let raw = try context.parameters.require("address")
        let address = try AddressKey.parse(
            Self.decoded(Substring(raw)), property: "address",
            defaultRegion: try await directory.region(caller.app, logger: context.logger))
        let fields = try await Self.patchFields(request, allowed: ["policy", "removed", "hidden"])
        var policy: String?
        switch fields["policy"] {
        case nil: break
        case .string(let value)? where value == "public" || value == "known_only": policy = value
        default: throw APIError.invalid("policy", "policy is public or known_only.")
        }
        func flag(_ name: String) throws -> Bool? {
            switch fields[name] {
            case nil: return nil
            case .bool(let value)?: return value
            default: throw APIError.invalid(name, "\(name) is true or false.")
            }
        }
        let (removed, hidden) = (try flag("removed"), try flag("hidden"))
        guard policy != nil || removed != nil || hidden != nil else {
            throw APIError(.missingProperty, "Set at least one of policy, removed and hidden.", property: "policy")
        }
        return try Response.json(
            try await directory.setPolicy(
                id, address: address, policy: policy, removed: removed, hidden: hidden, caller: caller, logger: context.logger))
    }

    /// The fields a PATCH sets: a JSON object of them, or a Layer-Patch document (`Content-Type:
    /// application/vnd.layer-patch+json`) of `set` operations.
    static func patchFields(_ request: Request, allowed: Set<String>) async throws -> [String: JSONValue] {
        let type = request.headers[.contentType]?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        var fields: [String: JSONValue] = [:]
        if type == MediaType.layerPatch {
            for (index, operation) in try await request.decodeLayerPatch().enumerated() {
                guard allowed.contains(operation.property) else {
                    throw APIError.invalid(
                        operation.property, "'\(operation.property)' is not a property that can be changed here.")
                }
                guard operation.operation == .set, let value = operation.value else {
                    throw APIError.invalid("\(index).operation", "Only set operations with a value change \(operation.property).")
                }
                fields[operation.property] = value
            }
        } else {
            let body = try await request.decodeJSON(JSONValue.self)
            try allowOnly(allowed, in: body)
            if case .object(let object) = body { fields = object }
        }
        return fields
    }

    @Sendable func createBook(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let reader = try await directory.reader(caller, logger: context.logger)
        let records: JSONValue
        let type = request.headers[.contentType]?.lowercased() ?? ""
        if type.hasPrefix("text/vcard") || type.hasPrefix("text/x-vcard") || type.hasPrefix("text/directory") {
            let buffer: ByteBuffer
            do { buffer = try await request.body.collect(upTo: caller.bodyLimit) } catch is NIOTooManyBytesError {
                throw APIError(.requestTooLarge, "The request body is larger than \(caller.bodyLimit) bytes.")
            }
            do throws(VCard.Failure) {
                records = .array(try VCard.records(String(buffer: buffer)))
            } catch {
                throw APIError(
                    .invalidProperty, "The vCard body cannot be read: \(error.reason).",
                    data: [
                        "property": "contacts",
                        "errors": [["index": .number(Double(error.card)), "property": "vcard", "reason": .string(error.reason)]],
                    ])
            }
        } else {
            let body = try await request.decodeJSON(JSONValue.self, limit: caller.bodyLimit)
            try Self.allowOnly(["contacts"], in: body)
            guard let contacts = body["contacts"] else {
                throw APIError(.missingProperty, "The body needs 'contacts', a list of records.", property: "contacts")
            }
            records = contacts
        }
        let (directory, logger) = (directory, context.logger)
        return try await ImportDeadline.run {
            let people = try reader.read(records, name: "contacts", limit: caller.recordLimit)
            return try Response.json(try await directory.createBook(people, caller: caller, logger: logger), status: .created)
        }
    }

    @Sendable func getBook(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let book = try context.parameters.layerID("book", as: .addressBooks).uuid
        let contacts = try await directory.bookContacts(book, caller: caller, logger: context.logger)
        return try Response.json(
            [
                "id": .string(LayerID(.addressBooks, book).uri),
                "contacts": .array(
                    contacts.filter { $0.mergedInto == nil }.map {
                        PersonObject.render($0.document, id: LayerID(.contacts, $0.id).uri)
                    }),
            ] as JSONValue)
    }

    @Sendable func bookDuplicates(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let caller = try caller(context)
        let book = try context.parameters.layerID("book", as: .addressBooks).uuid
        return try Response.json(try await directory.bookDuplicates(book, caller: caller, logger: context.logger))
    }

    @Sendable func consolidate(_ request: Request, context: LayerRequestContext) async throws -> Response {
        struct Body: Decodable {
            var keep: String
            var merge: String
        }
        let caller = try caller(context)
        let book = try context.parameters.layerID("book", as: .addressBooks).uuid
        let body = try await request.decodeJSON(Body.self, allowedKeys: ["keep", "merge"])
        guard let keep = LayerID(parsing: body.keep, as: .contacts) else {
            throw APIError.invalid("keep", "keep is a contact id (layer:///contacts/<uuid>).")
        }
        guard let merge = LayerID(parsing: body.merge, as: .contacts) else {
            throw APIError.invalid("merge", "merge is a contact id (layer:///contacts/<uuid>).")
        }
        return try Response.json(
            try await directory.consolidate(book, keep: keep.uuid, merge: merge.uuid, caller: caller, logger: context.logger))
    }

    /// Refuses a body that is not an object or has properties beyond `keys`.
    static func allowOnly(_ keys: Set<String>, in body: JSONValue) throws {
        guard case .object(let fields) = body else { throw APIError.invalid("body", "The body is a JSON object.") }
        if let unknown = fields.keys.sorted().first(where: { !keys.contains($0) }) {
            throw APIError.invalid(unknown, "'\(unknown)' is not a property of this request.")
        }
    }

    static func decoded(_ text: Substring) -> String {
        let raw = String(text)
        return raw.removingPercentEncoding ?? raw
    }
}
