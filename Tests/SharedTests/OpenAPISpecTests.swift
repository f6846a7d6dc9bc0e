import LayerModels
import LayerServer
import LayerTesting
import Testing

/// How the OpenAPI files are put together: a service's file with the shared one, and the services
/// of one process into one document.
@Suite struct OpenAPISpecTests {
    static let alpha = """
        openapi: 3.1.0
        info: {title: Alpha service, version: '3.0', description: Alpha things.}
        tags:
          - {name: alpha, description: Alpha routes.}
        paths:
          /alpha:
            get:
              operationId: getAlpha
              responses:
                '200': {$ref: '#/components/responses/NoContent'}
                '404': {$ref: '#/components/responses/Missing'}
        components:
          responses:
            Missing: {description: No alpha.}
        """

    static let beta = """
        openapi: 3.1.0
        info: {title: Beta service, version: '3.0', description: Beta things.}
        tags:
          - {name: beta, description: Beta routes.}
        paths:
          /alpha:
            post:
              operationId: postAlpha
              responses:
                '204': {$ref: '#/components/responses/NoContent'}
          /beta:
            get:
              operationId: getBeta
              responses:
                '404': {$ref: '#/components/responses/Missing'}
        components:
          responses:
            Missing:
              description: No alpha.
        """

    func spec(_ yaml: String, _ source: String = "test") throws -> OpenAPISpec {
        try OpenAPISpec(yaml: yaml, source: source)
    }

    func operations(_ yaml: String) throws -> Set<String> {
        Set(try OpenAPIDocument(yaml: yaml).operations.map { "\($0.method) \($0.path)" })
    }

    @Test func aServiceDocumentIsItsFileWithTheSharedParts() throws {
        let document = OpenAPISpec.serviceDocument(Array(Self.alpha.utf8), service: "alpha")
        let parsed = try OpenAPIDocument(yaml: document)
        #expect(parsed.root["info"]?["title"] == "Alpha service")
        #expect(parsed.root["info"]?["version"] == "3.0")
        #expect(parsed.root["openapi"] == "3.1.0")
        #expect(parsed.root["servers"] == [["url": "/"]])
        #expect(parsed.root["tags"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["alpha", "server", "operational"])
        #expect(
            try operations(document) == [
                "get /alpha", "get /", "get /ping", "get /health/live", "get /health/ready", "get /metrics", "get /openapi.yaml",
            ])
        #expect(parsed.root["paths"]?["/alpha"]?["get"]?["responses"]?["200"] == ["$ref": "#/components/responses/NoContent"])
        #expect(parsed.root["components"]?["responses"]?["NoContent"] != nil)
        #expect(parsed.root["components"]?["responses"]?["Missing"] == ["description": "No alpha."])
        #expect(parsed.root["components"]?["schemas"]?["Error"] != nil)
    }

    @Test func operationsOfOnePathMayComeFromSeveralDocumentsAndEqualComponentsMerge() throws {
        let merged = try OpenAPISpec.merging([spec(Self.alpha), spec(Self.beta)]).yaml()
        #expect(try operations(merged) == ["get /alpha", "post /alpha", "get /beta"])
        let root = try OpenAPIDocument(yaml: merged).root
        #expect(root["info"]?["title"] == "Alpha service")
        #expect(root["tags"]?.arrayValue?.count == 2)
    }

    @Test func theSameOperationTwiceIsRefused() throws {
        let again = Self.beta.replacingOccurrences(
            of: "    post:\n      operationId: postAlpha", with: "    get:\n      operationId: postAlpha")
        let error = #expect(throws: OpenAPISpecError.self) { try OpenAPISpec.merging([spec(Self.alpha, "a"), spec(again, "b")]) }
        #expect(error?.description.contains("GET /alpha") == true, "\(String(describing: error))")
    }

    @Test func aComponentOfTheSameNameAndOtherContentIsRefused() throws {
        let other = Self.beta.replacingOccurrences(of: "description: No alpha.", with: "description: No beta.")
        let error = #expect(throws: OpenAPISpecError.self) { try OpenAPISpec.merging([spec(Self.alpha), spec(other)]) }
        #expect(error?.description.contains("components.responses.Missing") == true, "\(String(describing: error))")
    }

    @Test func aServiceFileThatRedefinesASharedComponentIsRefused() throws {
        let clash = Self.alpha + "\n    InternalError: {description: Something else.}\n"
        let error = #expect(throws: OpenAPISpecError.self) {
            try OpenAPISpec.merging([spec(clash, "alpha"), OpenAPISpec.common()])
        }
        #expect(error?.description.contains("components.responses.InternalError") == true, "\(String(describing: error))")
    }

    @Test func aKeyWrittenTwiceIsRefused() throws {
        let twice = Self.alpha.replacingOccurrences(
            of: "paths:\n", with: "paths:\n  /alpha:\n    put: {responses: {'204': {description: Done.}}}\n")
        let error = #expect(throws: OpenAPISpecError.self) { try spec(twice) }
        #expect(error?.description.contains("/alpha") == true, "\(String(describing: error))")
    }

    @Test func aProcessOfOneServiceServesExactlyThatServicesDocument() throws {
        let alpha = OpenAPISpec.serviceDocument(Array(Self.alpha.utf8), service: "alpha")
        #expect(try OpenAPISpec.suiteDocument([("alpha", alpha)]) == alpha)
    }

    @Test func aProcessOfSeveralServicesServesOneDocumentOfAllTheirRoutes() throws {
        let alpha = OpenAPISpec.serviceDocument(Array(Self.alpha.utf8), service: "alpha")
        let beta = OpenAPISpec.serviceDocument(Array(Self.beta.utf8), service: "beta")
        let suite = try OpenAPISpec.suiteDocument([("alpha", alpha), ("beta", beta)])
        #expect(try operations(suite) == (try operations(alpha)).union(try operations(beta)))
        let root = try OpenAPIDocument(yaml: suite).root
        #expect(root["info"]?["title"] == "Layerline suite (alpha + beta)")
        #expect(root["info"]?["version"] == "3.0")
        let description = root["info"]?["description"]?.stringValue ?? ""
        #expect(description.contains("Alpha service: Alpha things.") && description.contains("Beta service: Beta things."))
        #expect(root["tags"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["alpha", "beta", "server", "operational"])
    }

    @Test func servicesThatServeTheSameOperationCannotShareAProcess() throws {
        let alpha = OpenAPISpec.serviceDocument(Array(Self.alpha.utf8), service: "alpha")
        #expect(throws: OpenAPISpecError.self) { try OpenAPISpec.suiteDocument([("alpha", alpha), ("again", alpha)]) }
    }
}
