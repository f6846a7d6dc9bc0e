import LayerServer

// The OpenAPI 3.1 document of the sync service's public routes, served at `GET /openapi.yaml` by
// `layer-sync`. `Tests/SyncTests/OpenAPIConformanceTests.swift` checks that it lists exactly the
// routes the service serves and that real responses match it.
//
// It is written in the YAML subset that `Tests/Support/OpenAPIDocument.swift` parses: block
// mappings and `- ` sequences indented by two spaces (a nested block deeper than its key),
// one-line plain or quoted scalars, flow collections such as `[a, 'null']` and `{}`, full-line
// `#` comments; no tabs, anchors, aliases, tags, block scalars or trailing comments. A scalar
// that contains `: ` or ` #`, starts with a symbol, or must stay a string (`'200'`, `'null'`)
// is quoted. The schemas mirror what Model/Objects.swift and Store/Changelog.swift encode: the
// objects write empty attributes as null instead of leaving them out. Only that subset of
// JSON Schema is checked (no oneOf/anyOf), so a value of two shapes gets one schema that
// admits both and says so.
//
// Repeated pieces (error responses, JSON bodies) come from the helpers in Components.swift and
// ClientPaths.swift, which write them at the indentation of the place they go.
let syncOpenAPI = [
    syncOpenAPIHeader, "paths:", syncOpenAPIOperationalPaths, syncOpenAPIClientPaths, syncOpenAPISyncPaths, syncOpenAPIPushPaths,
    syncOpenAPIContentPaths, syncOpenAPIAnnouncementPaths, syncOpenAPIServerPaths, syncOpenAPIComponents,
    syncOpenAPISchemas,
].joined(separator: "\n")

let syncOpenAPIHeader = """
openapi: 3.1.0
info:
  title: Layerline sync service
  version: '3.0'
  summary: Conversations, messages, rich content, receipts, identities, announcements and the per-user changelog.
  description: 'The Client API (conversations, messages, receipts, identities, announcements, rich content and POST /sync), the sync part of the Server API under /apps/{app} and the operational routes. Client API and Server API requests must send Accept: application/vnd.layer+json; version=3.0; a missing or other version is answered with 406 invalid_header. The signed content URLs and the operational routes do not look at Accept. Sessions come from the auth service (POST /sessions there) and are checked with it. Bodies are JSON; PATCH takes a Layer-Patch document (Content-Type: application/vnd.layer-patch+json), and POST with X-HTTP-Method-Override: PATCH works too. Ids are layer:/// URIs; path parameters take the URI (URL-encoded) or the bare UUID. Timestamps are ISO-8601 UTC with fractional seconds. Lists take page_size and from_id and carry the total in Layer-Count. Every response carries X-Request-Id; every error has the Error body.'
servers:
  - url: /
tags:
  - name: conversations
    description: Conversations of the signed-in user (Layer session).
  - name: messages
    description: Messages and receipts (Layer session).
  - name: identities
    description: Identities of the users one shares a conversation with (Layer session).
  - name: sync
    description: The changelog exchange of a device (Layer session).
  - name: push
    description: Changes, signals and presence pushed over a WebSocket or Server-Sent Events.
  - name: content
    description: Rich content; the upload and download URLs are signed and need no session.
  - name: announcements
    description: Announcements the app sent to the user (Layer session).
  - name: server
    description: Server API of an app backend, authenticated with a Server API token of that app.
  - name: operational
    description: Discovery, probes, metrics and this document.
"""

let syncOpenAPIOperationalPaths = """
  /:
    get:
      operationId: discover
      tags: [operational]
      summary: The service entry points, in a Link header.
      security: []
      responses:
        '200':
          description: An empty object; the entry points (rel conversations and content) are in the Link header.
          headers:
            Link:
              $ref: '#/components/headers/Link'
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Empty'
        '500':
          $ref: '#/components/responses/InternalError'
"""
    + "\n" + OperationalRoutes.openAPIPaths(readinessSummary: "Readiness probe (the database and the auth service).")
