import LayerServer

// The OpenAPI 3.1 document of the auth service's public routes, served at `GET /openapi.yaml`.
// `Tests/AuthTests/OpenAPIConformanceTests.swift` checks real responses against it.
//
// Keep it in the YAML subset that `Tests/Support/OpenAPIDocument.swift` parses: block mappings
// and `- ` sequences indented with two spaces (a nested block always indented deeper than its
// key), plain or quoted scalars on one line, flow collections such as `[a, 'null']` and `{}`,
// full-line `#` comments. No tabs, anchors, aliases, tags, block scalars (`|`, `>`) or trailing
// comments. Quote a scalar that contains `: `, ` #`, starts with a symbol, or must stay a string
// (`'200'`, `'3.0'`, `'null'`). Response schemas mirror the Swift `Codable` types exactly:
// optional properties are omitted when nil, hence not `required`, except in the Server API's
// identities, which spell out `null`.
//
// The document is long, so it is kept in parts by area and joined here in order.
let authOpenAPI = [
    openAPIHeader, "paths:", openAPIClientPaths, openAPIOperatorPaths, openAPIServerPaths, openAPIOperationalPaths,
    openAPIComponents, openAPISchemas,
].joined(separator: "\n")

let openAPIHeader = """
openapi: 3.1.0
info:
  title: Layerline auth service
  version: '3.0'
  summary: Apps, identity providers, nonces, identity tokens, sessions and device certificates.
  description: 'The Client API (nonces, sessions, device certificates), the operator API under /admin, the auth part of the Server API under /apps/{app} and the operational routes. Client API and Server API requests must send Accept: application/vnd.layer+json; version=3.0 (the API version); a missing or other version is answered with 406 invalid_header. The operator API and the operational routes do not look at Accept. Bodies are JSON; PATCH on the Server API takes a Layer-Patch document (Content-Type: application/vnd.layer-patch+json). A client that cannot send PATCH may send POST with X-HTTP-Method-Override: PATCH. Ids are layer:/// URIs; path parameters take the URI (URL-encoded) or the bare UUID. Timestamps are ISO-8601 UTC with fractional seconds. Every response carries X-Request-Id; every error has the Error body.'
servers:
  - url: /
tags:
  - name: client
    description: Client API, authenticated with a Layer session token.
  - name: operator
    description: Operator API (the developer dashboard), authenticated with the operator token.
  - name: server
    description: Server API of an app backend, authenticated with a Server API token of that app.
  - name: operational
    description: Discovery, probes, metrics and this document.
"""

let openAPIOperationalPaths = OperationalRoutes.openAPIPaths(
    readinessSummary: "Readiness probe (the database and the services this one calls).")
