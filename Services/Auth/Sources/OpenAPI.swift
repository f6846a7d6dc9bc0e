// The OpenAPI 3.1 document of the auth service's public routes, served at `GET /openapi.yaml`.
// `Tests/AuthTests/OpenAPIConformanceTests.swift` checks real responses against it.
//
// Keep it in the YAML subset that `Tests/Support/OpenAPIDocument.swift` parses: block mappings
// and `- ` sequences indented with two spaces (a nested block always indented deeper than its
// key), plain or quoted scalars on one line, flow collections such as `[a, 'null']` and `{}`,
// full-line `#` comments. No tabs, anchors, aliases, tags, block scalars (`|`, `>`) or trailing
// comments. Quote a scalar that contains `: `, ` #`, starts with a symbol, or must stay a string
// (`'200'`, `'3.0'`, `'null'`). Response schemas mirror the Swift `Codable` types exactly:
// optional properties are omitted when nil (never `null`), hence not `required`.
let authOpenAPI = """
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
paths:
  /:
    get:
      operationId: discover
      tags: [operational]
      summary: The service entry points, in a Link header.
      security: []
      responses:
        '200':
          description: An empty object; the entry points (rel nonces and sessions) are in the Link header.
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
  /nonces:
    post:
      operationId: createNonce
      tags: [client]
      summary: A fresh nonce for an identity token (single use, valid 10 minutes). No body.
      security: []
      responses:
        '201':
          description: The nonce.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Nonce'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '429':
          $ref: '#/components/responses/TooManyRequests'
        '500':
          $ref: '#/components/responses/InternalError'
  /sessions:
    post:
      operationId: createSession
      tags: [client]
      summary: Trades an identity token for a session token.
      description: A client that still holds a challenged session may send it in Authorization to renew it when the identity token is for the same user.
      security:
        - {}
        - layerSession: []
      requestBody:
        required: true
        description: At most 16 KiB.
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/CreateSession'
      responses:
        '201':
          description: The session. Link names the conversations, content and websocket entry points.
          headers:
            X-Layer-User-ID:
              $ref: '#/components/headers/LayerUserID'
            X-Layer-Session-Token:
              $ref: '#/components/headers/LayerSessionToken'
            X-Layer-Session-TTL:
              $ref: '#/components/headers/LayerSessionTTL'
            Link:
              $ref: '#/components/headers/Link'
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Session'
        '400':
          $ref: '#/components/responses/BadRequest'
        '403':
          $ref: '#/components/responses/Forbidden'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '429':
          $ref: '#/components/responses/TooManyRequests'
        '500':
          $ref: '#/components/responses/InternalError'
  /sessions/current:
    get:
      operationId: currentSession
      tags: [client]
      summary: The session the request authenticated with.
      security:
        - layerSession: []
      responses:
        '200':
          description: The session. The X-Layer-* headers are present only when the request opened its session inline with Layer identity-token.
          headers:
            X-Layer-User-ID:
              description: The user id of a session opened inline.
              schema:
                type: string
            X-Layer-Session-Token:
              description: The token of a session opened inline.
              schema:
                type: string
            X-Layer-Session-TTL:
              description: The lifetime in seconds of a session opened inline.
              schema:
                type: integer
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/CurrentSession'
        '401':
          $ref: '#/components/responses/Challenge'
        '403':
          $ref: '#/components/responses/Forbidden'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /sessions/{token}:
    parameters:
      - $ref: '#/components/parameters/SessionToken'
    delete:
      operationId: deleteSession
      tags: [client]
      summary: Ends a session (deauthenticate). The token in the path is the credential.
      security: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '404':
          $ref: '#/components/responses/NotFound'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '500':
          $ref: '#/components/responses/InternalError'
  /certificates:
    post:
      operationId: createCertificate
      tags: [client]
      summary: Certifies a device with the suite device CA.
      security: []
      requestBody:
        required: true
        description: At most 32 KiB.
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/CreateCertificate'
      responses:
        '201':
          description: The issued certificate.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Certificate'
        '400':
          $ref: '#/components/responses/BadRequest'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '429':
          $ref: '#/components/responses/TooManyRequests'
        '500':
          $ref: '#/components/responses/InternalError'
        '503':
          $ref: '#/components/responses/ServiceUnavailable'
  /admin/apps:
    post:
      operationId: adminCreateApp
      tags: [operator]
      summary: Creates an app.
      security:
        - operatorToken: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/CreateApp'
      responses:
        '201':
          description: The app.
          headers:
            Location:
              $ref: '#/components/headers/Location'
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/App'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}:
    parameters:
      - $ref: '#/components/parameters/App'
    get:
      operationId: adminGetApp
      tags: [operator]
      summary: An app and its settings.
      security:
        - operatorToken: []
      responses:
        '200':
          $ref: '#/components/responses/App'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '500':
          $ref: '#/components/responses/InternalError'
    patch:
      operationId: adminUpdateApp
      tags: [operator]
      summary: Changes the settings of an app (a JSON object of the settings to change, not Layer-Patch).
      security:
        - operatorToken: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/UpdateApp'
      responses:
        '200':
          $ref: '#/components/responses/App'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}/providers:
    parameters:
      - $ref: '#/components/parameters/App'
    post:
      operationId: adminCreateProvider
      tags: [operator]
      summary: Adds an identity provider to an app. The body is optional.
      security:
        - operatorToken: []
      requestBody:
        required: false
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/CreateProvider'
      responses:
        '201':
          description: The provider; its id is the iss of the identity tokens it signs.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Provider'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}/providers/{provider}/keys:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/Provider'
    post:
      operationId: adminRegisterKey
      tags: [operator]
      summary: Registers an RSA public key of a provider.
      security:
        - operatorToken: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/RegisterKey'
      responses:
        '201':
          description: The key; its id is the kid of the identity tokens it signs.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Key'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}/providers/{provider}/keys/{key}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/Provider'
      - $ref: '#/components/parameters/Key'
    patch:
      operationId: adminUpdateKey
      tags: [operator]
      summary: Enables or disables a key.
      security:
        - operatorToken: []
      requestBody:
        required: true
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/UpdateKey'
      responses:
        '200':
          description: The key.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Key'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
    delete:
      operationId: adminDeleteKey
      tags: [operator]
      summary: Deletes a key; identity tokens signed with it are refused (eit_key_deleted).
      security:
        - operatorToken: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}/tokens:
    parameters:
      - $ref: '#/components/parameters/App'
    post:
      operationId: adminCreateToken
      tags: [operator]
      summary: Mints a Server API token for an app (shown once, stored hashed). No body.
      security:
        - operatorToken: []
      responses:
        '201':
          description: The token and its id (for revoking it).
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Token'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}/tokens/{token}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/TokenID'
    delete:
      operationId: adminRevokeToken
      tags: [operator]
      summary: Revokes a Server API token.
      security:
        - operatorToken: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/apps/{app}/users/{user}/challenge:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    post:
      operationId: adminChallengeUser
      tags: [operator]
      summary: Challenges all sessions of a user; they answer 401 with a new nonce until renewed. No body.
      security:
        - operatorToken: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '500':
          $ref: '#/components/responses/InternalError'
  /admin/certificates/{certificate}:
    parameters:
      - $ref: '#/components/parameters/Certificate'
    delete:
      operationId: adminRevokeCertificate
      tags: [operator]
      summary: Revokes a device certificate; the sessions bound to it stop working.
      security:
        - operatorToken: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '401':
          $ref: '#/components/responses/OperatorUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '500':
          $ref: '#/components/responses/InternalError'
  /apps/{app}:
    parameters:
      - $ref: '#/components/parameters/App'
    patch:
      operationId: serverUpdateApp
      tags: [server]
      summary: Changes the app settings session_ttl_in_seconds (30 to 31536000) and require_certified_connections with set operations.
      security:
        - serverAPIToken: []
      requestBody:
        required: true
        content:
          application/vnd.layer-patch+json:
            schema:
              $ref: '#/components/schemas/LayerPatch'
      responses:
        '202':
          $ref: '#/components/responses/Accepted'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/ServerAPIUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /apps/{app}/users/{user}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    get:
      operationId: serverGetUser
      tags: [server]
      summary: A user of the app, as the auth service knows it.
      security:
        - serverAPIToken: []
      responses:
        '200':
          description: The user.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/User'
        '401':
          $ref: '#/components/responses/ServerAPIUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '500':
          $ref: '#/components/responses/InternalError'
    patch:
      operationId: serverUpdateUser
      tags: [server]
      summary: Suspends or reinstates a user with a set operation on suspended (boolean).
      security:
        - serverAPIToken: []
      requestBody:
        required: true
        content:
          application/vnd.layer-patch+json:
            schema:
              $ref: '#/components/schemas/LayerPatch'
      responses:
        '202':
          $ref: '#/components/responses/Accepted'
        '400':
          $ref: '#/components/responses/BadRequest'
        '401':
          $ref: '#/components/responses/ServerAPIUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '413':
          $ref: '#/components/responses/PayloadTooLarge'
        '422':
          $ref: '#/components/responses/Unprocessable'
        '500':
          $ref: '#/components/responses/InternalError'
  /apps/{app}/users/{user}/sessions:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    delete:
      operationId: serverDeleteSessions
      tags: [server]
      summary: Revokes all sessions of a user.
      security:
        - serverAPIToken: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '401':
          $ref: '#/components/responses/ServerAPIUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '500':
          $ref: '#/components/responses/InternalError'
  /apps/{app}/users/{user}/challenge:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    post:
      operationId: serverChallengeUser
      tags: [server]
      summary: Challenges all sessions of a user. No body.
      security:
        - serverAPIToken: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
        '401':
          $ref: '#/components/responses/ServerAPIUnauthorized'
        '404':
          $ref: '#/components/responses/NotFound'
        '406':
          $ref: '#/components/responses/NotAcceptable'
        '500':
          $ref: '#/components/responses/InternalError'
  /health/live:
    get:
      operationId: liveness
      tags: [operational]
      summary: Liveness probe.
      security: []
      responses:
        '200':
          description: The process answers.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/Liveness'
        '500':
          $ref: '#/components/responses/InternalError'
  /health/ready:
    get:
      operationId: readiness
      tags: [operational]
      summary: Readiness probe (the database and the services this one calls).
      security: []
      responses:
        '200':
          $ref: '#/components/responses/Readiness'
        '503':
          $ref: '#/components/responses/Readiness'
        '500':
          $ref: '#/components/responses/InternalError'
  /metrics:
    get:
      operationId: metrics
      tags: [operational]
      summary: Metrics in the Prometheus text format.
      security: []
      responses:
        '200':
          description: The metrics.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            text/plain:
              schema:
                type: string
        '500':
          $ref: '#/components/responses/InternalError'
  /openapi.yaml:
    get:
      operationId: openAPI
      tags: [operational]
      summary: This document.
      security: []
      responses:
        '200':
          description: The OpenAPI document.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/yaml:
              schema:
                type: string
        '500':
          $ref: '#/components/responses/InternalError'
components:
  securitySchemes:
    layerSession:
      type: apiKey
      in: header
      name: Authorization
      description: 'Authorization: Layer session-token="<session token>" (single quotes accepted too). A request may instead carry Layer identity-token="<identity token>" to open a session inline; it is returned in the X-Layer-User-ID, X-Layer-Session-Token and X-Layer-Session-TTL headers.'
    operatorToken:
      type: http
      scheme: bearer
      description: The operator token from configuration (layer dev generates one).
    serverAPIToken:
      type: http
      scheme: bearer
      description: A Server API token of the app in the path (POST /admin/apps/{app}/tokens).
  parameters:
    App:
      name: app
      in: path
      required: true
      description: The app, as layer:///apps/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 6f1c2a3e-6b7d-4e8f-9a0b-1c2d3e4f5a6b
    Provider:
      name: provider
      in: path
      required: true
      description: The provider, as layer:///providers/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 7a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d
    Key:
      name: key
      in: path
      required: true
      description: The key, as layer:///keys/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 8b3c4d5e-6f7a-4b2c-9d3e-4f5a6b7c8d9e
    TokenID:
      name: token
      in: path
      required: true
      description: The Server API token id, as layer:///tokens/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 9c4d5e6f-7a8b-4c3d-8e4f-5a6b7c8d9e0f
    Certificate:
      name: certificate
      in: path
      required: true
      description: The certificate, as layer:///certificates/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 0d5e6f7a-8b9c-4d4e-9f5a-6b7c8d9e0f1a
    User:
      name: user
      in: path
      required: true
      description: The app user id, URL-encoded.
      schema:
        type: string
      example: nobody-here
    SessionToken:
      name: token
      in: path
      required: true
      description: The session token to end.
      schema:
        type: string
      example: not-a-session-token
  headers:
    RequestId:
      description: The request id (the caller X-Request-Id when it is sane, else a new UUID), also in the logs.
      required: true
      schema:
        type: string
    Link:
      description: RFC 8288 links to entry points, as <url>; rel=<name> separated by commas.
      required: true
      schema:
        type: string
        pattern: '^<[^>]+>; rel=[a-z]+(, <[^>]+>; rel=[a-z]+)*$'
    Location:
      description: The path of the created resource.
      required: true
      schema:
        type: string
    RetryAfter:
      description: Seconds to wait before trying again.
      required: true
      schema:
        type: integer
    LayerUserID:
      description: The user id of the session.
      required: true
      schema:
        type: string
    LayerSessionToken:
      description: The session token (as in the body).
      required: true
      schema:
        type: string
    LayerSessionTTL:
      description: The session lifetime in seconds (the app setting, 30 days unless changed).
      required: true
      schema:
        type: integer
    LayerChallenge:
      description: The challenge of the authentication protocol, with the fresh nonce of data.nonce.
      required: true
      schema:
        type: string
        pattern: '^Layer realm="[^"]*", nonce="[A-Za-z0-9_-]+"$'
    OperatorChallenge:
      description: Asks for the operator bearer token.
      required: true
      schema:
        type: string
        pattern: '^Bearer realm="operator"$'
    ServerAPIChallenge:
      description: Asks for a Server API bearer token.
      required: true
      schema:
        type: string
        pattern: '^Bearer realm="server-api"$'
  responses:
    NoContent:
      description: Done; no body.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
    Accepted:
      description: Accepted; no body.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
    App:
      description: The app.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/App'
    Readiness:
      description: Ready (200, every check ok) or not (503, the failing checks are unavailable).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Readiness'
    BadRequest:
      description: invalid_request (10) - the body is missing, is not JSON, or is not of the right kind.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    Challenge:
      description: authentication_required (4) - no session, or an expired, ended or challenged one. data.nonce is a fresh nonce for a new identity token.
      headers:
        WWW-Authenticate:
          $ref: '#/components/headers/LayerChallenge'
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Challenge'
    OperatorUnauthorized:
      description: authentication_required (4) - the operator bearer token is missing or wrong.
      headers:
        WWW-Authenticate:
          $ref: '#/components/headers/OperatorChallenge'
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    ServerAPIUnauthorized:
      description: authentication_required (4) - no live Server API token of this app.
      headers:
        WWW-Authenticate:
          $ref: '#/components/headers/ServerAPIChallenge'
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    Forbidden:
      description: invalid_app_id (2, data.property app_id), user_suspended (6) or access_denied (101, data.reason certificate_required, certificate_revoked or certificate_expired).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    NotFound:
      description: not_found (102) - the resource does not exist, or the path parameter is not an id of its kind.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    NotAcceptable:
      description: 'invalid_header (107) - Accept is not application/vnd.layer+json; version=3.0 (data.header Accept), or a PATCH body is not application/vnd.layer-patch+json (data.header Content-Type).'
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    PayloadTooLarge:
      description: request_too_large (112) - the body is over the route limit (64 KiB unless stated).
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    Unprocessable:
      description: missing_property (104) or invalid_property (105); data.property names the field, data.reason an eit_* reason for identity tokens and CSRs.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    TooManyRequests:
      description: rate_limit_exceeded (7) - this client address is over the route rate limit.
      headers:
        Retry-After:
          $ref: '#/components/headers/RetryAfter'
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    InternalError:
      description: internal_server_error (100) - a bug; it has been logged under the request id.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    ServiceUnavailable:
      description: service_unavailable (1) - the device CA is not loaded yet.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
  schemas:
    Error:
      type: object
      additionalProperties: false
      required: [id, code, message, url]
      properties:
        id:
          type: string
          enum: [service_unavailable, invalid_app_id, invalid_request_id, authentication_required, app_suspended, user_suspended, rate_limit_exceeded, request_timeout, invalid_operation, invalid_request, internal_server_error, access_denied, not_found, missing_property, invalid_property, invalid_endpoint, invalid_header, conflict, method_not_allowed, participant_blocked, id_in_use, request_too_large]
        code:
          type: integer
        message:
          type: string
        url:
          type: string
        data:
          type: [object, 'null']
    Challenge:
      type: object
      additionalProperties: false
      required: [id, code, message, url, data]
      properties:
        id:
          type: string
          enum: [authentication_required]
        code:
          type: integer
          enum: [4]
        message:
          type: string
        url:
          type: string
        data:
          type: object
          additionalProperties: false
          required: [nonce]
          properties:
            nonce:
              type: string
    Empty:
      type: object
      additionalProperties: false
    Nonce:
      type: object
      additionalProperties: false
      required: [nonce]
      properties:
        nonce:
          type: string
          pattern: '^[A-Za-z0-9_-]{22,}$'
    CreateSession:
      type: object
      required: [identity_token, app_id]
      properties:
        identity_token:
          type: string
          description: The identity token (compact JWS, RS256, cty layer-eit;v=1).
        app_id:
          type: string
          description: layer:///apps/<uuid>, layer:///apps/production/<uuid> (or staging) or the bare UUID.
    Session:
      type: object
      additionalProperties: false
      required: [session_token]
      properties:
        session_token:
          type: string
    CurrentSession:
      type: object
      additionalProperties: false
      required: [user_id, app_id, certificate_bound]
      properties:
        user_id:
          type: string
        app_id:
          type: string
          pattern: '^layer:///apps/[0-9a-f-]{36}$'
        identity:
          $ref: '#/components/schemas/Identity'
        expires_at:
          type: string
          format: date-time
        certificate_bound:
          type: boolean
    Identity:
      type: object
      additionalProperties: false
      required: [user_id]
      properties:
        user_id:
          type: string
        display_name:
          type: string
        avatar_url:
          type: string
        first_name:
          type: string
        last_name:
          type: string
    CreateCertificate:
      type: object
      required: [csr]
      properties:
        csr:
          type: string
          description: A PEM PKCS#10 request (device id in the subject CN) or a Layer CSR (compact JWS, cty layer-csr;v=1).
    Certificate:
      type: object
      additionalProperties: false
      required: [id, certificate, thumbprint, device_id, expires_at]
      properties:
        id:
          type: string
          pattern: '^layer:///certificates/[0-9a-f-]{36}$'
        certificate:
          type: string
          description: The X.509 v3 client certificate, PEM.
          pattern: '^-----BEGIN CERTIFICATE-----'
        thumbprint:
          type: string
          description: Its SHA-256 thumbprint, base64url (x5t#S256).
        device_id:
          type: string
        expires_at:
          type: string
          format: date-time
    CreateApp:
      type: object
      required: [name]
      properties:
        name:
          type: string
          minLength: 1
          maxLength: 128
    UpdateApp:
      type: object
      properties:
        session_ttl_in_seconds:
          type: integer
          minimum: 30
          maximum: 31536000
        require_certified_connections:
          type: boolean
    App:
      type: object
      additionalProperties: false
      required: [id, name, created_at, session_ttl_in_seconds, require_certified_connections]
      properties:
        id:
          type: string
          pattern: '^layer:///apps/[0-9a-f-]{36}$'
        name:
          type: string
        created_at:
          type: string
          format: date-time
        session_ttl_in_seconds:
          type: integer
        require_certified_connections:
          type: boolean
    CreateProvider:
      type: object
      properties:
        name:
          type: string
    Provider:
      type: object
      additionalProperties: false
      required: [id, app_id]
      properties:
        id:
          type: string
          pattern: '^layer:///providers/[0-9a-f-]{36}$'
        app_id:
          type: string
          pattern: '^layer:///apps/[0-9a-f-]{36}$'
        name:
          type: string
    RegisterKey:
      type: object
      required: [public_key]
      properties:
        public_key:
          type: string
          description: A PEM RSA public key of at least 2048 bits.
    UpdateKey:
      type: object
      required: [enabled]
      properties:
        enabled:
          type: boolean
    Key:
      type: object
      additionalProperties: false
      required: [id, provider_id, enabled]
      properties:
        id:
          type: string
          pattern: '^layer:///keys/[0-9a-f-]{36}$'
        provider_id:
          type: string
          pattern: '^layer:///providers/[0-9a-f-]{36}$'
        enabled:
          type: boolean
    Token:
      type: object
      additionalProperties: false
      required: [id, token]
      properties:
        id:
          type: string
          pattern: '^layer:///tokens/[0-9a-f-]{36}$'
        token:
          type: string
    LayerPatch:
      type: array
      description: Layer-Patch operations, applied in order.
      items:
        $ref: '#/components/schemas/LayerPatchOperation'
    LayerPatchOperation:
      type: object
      required: [operation, property]
      properties:
        operation:
          type: string
          enum: [add, remove, set, delete]
        property:
          type: string
          minLength: 1
        value:
          description: Any JSON value.
        id:
          type: string
        index:
          type: integer
    User:
      type: object
      additionalProperties: false
      required: [identity, suspended]
      properties:
        identity:
          $ref: '#/components/schemas/BasicIdentity'
        suspended:
          type: boolean
    BasicIdentity:
      type: object
      additionalProperties: false
      description: The Server API writes empty attributes as null.
      required: [id, user_id, display_name, avatar_url, first_name, last_name]
      properties:
        id:
          type: string
          pattern: '^layer:///identities/'
        user_id:
          type: string
        display_name:
          type: [string, 'null']
        avatar_url:
          type: [string, 'null']
        first_name:
          type: [string, 'null']
        last_name:
          type: [string, 'null']
    Liveness:
      type: object
      additionalProperties: false
      required: [status]
      properties:
        status:
          type: string
          enum: [ok]
    Readiness:
      type: object
      additionalProperties: false
      required: [status, checks]
      properties:
        status:
          type: string
          enum: [ok, unavailable]
        checks:
          type: object
          required: [database]
          additionalProperties:
            type: string
            enum: [ok, unavailable]
"""
