// Security schemes, parameters, headers and responses of the OpenAPI document (see OpenAPI.swift).
let openAPIComponents = """
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
"""
