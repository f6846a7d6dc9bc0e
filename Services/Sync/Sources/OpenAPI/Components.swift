// Security schemes, parameters, headers and shared responses of the sync service's OpenAPI
// document (see OpenAPI.swift).

/// The error responses of an operation, one `$ref` per status, at the indentation of a
/// `responses` entry. 401 is the session challenge, or with `serverAPI` the bearer challenge.
func syncErrors(_ statuses: [Int], serverAPI: Bool = false) -> String {
    statuses.map { status in
        let name: String =
            switch status {
            case 400: "BadRequest"
            case 401: serverAPI ? "ServerAPIUnauthorized" : "Challenge"
            case 403: serverAPI ? "ServerAPIForbidden" : "Forbidden"
            case 404: "NotFound"
            case 406: "NotAcceptable"
            case 409: "Conflict"
            case 413: "PayloadTooLarge"
            case 422: "Unprocessable"
            case 429: "TooManyRequests"
            case 503: "ServiceUnavailable"
            default: "InternalError"
            }
        return "        '\(status)':\n          $ref: '#/components/responses/\(name)'"
    }.joined(separator: "\n")
}

let syncOpenAPIComponents = """
components:
  securitySchemes:
    layerSession:
      type: apiKey
      in: header
      name: Authorization
      description: 'Authorization: Layer session-token="<session token>" from the auth service (POST /sessions), single quotes accepted too; on these routes also ?session_token=<token>. A request may instead carry Layer identity-token="<identity token>" to open a session inline: it is then returned in the X-Layer-User-ID, X-Layer-Session-Token and X-Layer-Session-TTL headers of the response. The sync service checks sessions with the auth service.'
    serverAPIToken:
      type: http
      scheme: bearer
      description: A Server API token of the app in the path (minted by the operator API of the auth service, POST /admin/apps/{app}/tokens).
    signedURL:
      type: apiKey
      in: query
      name: signature
      description: The signature of an upload_url or download_url handed out in a content object, together with its expires parameter. Whoever holds the URL may use it until it expires; no session is needed.
  parameters:
    App:
      name: app
      in: path
      required: true
      description: The app, as layer:///apps/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 6f1c2a3e-6b7d-4e8f-9a0b-1c2d3e4f5a6b
    Conversation:
      name: conversation
      in: path
      required: true
      description: The conversation, as layer:///conversations/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e
    Message:
      name: message
      in: path
      required: true
      description: The message, as layer:///messages/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 2c3d4e5f-6a7b-4c8d-9e0f-1a2b3c4d5e6f
    Content:
      name: content
      in: path
      required: true
      description: The rich content, as layer:///content/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 3d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a
    Announcement:
      name: announcement
      in: path
      required: true
      description: The announcement, as layer:///announcements/<uuid> (URL-encoded) or the bare UUID.
      schema:
        type: string
      example: 4e5f6a7b-8c9d-4e0f-9a1b-2c3d4e5f6a7b
    User:
      name: user
      in: path
      required: true
      description: An app user id, URL-encoded (namespace/12345 is namespace%2F12345).
      schema:
        type: string
      example: nobody-here
    Blocked:
      name: blocked
      in: path
      required: true
      description: The blocked user id (URL-encoded), or its identity id (URL-encoded).
      schema:
        type: string
      example: nobody-blocked
    RequestTag:
      name: If-None-Match
      in: header
      description: 'A UUID (optionally quoted) that makes the create safe to repeat: a repeat with the same tag creates nothing and answers with what the first request created.'
      schema:
        type: string
    PageSize:
      name: page_size
      in: query
      description: How many items to return, 1 to 100 (default 100).
      schema:
        type: integer
        minimum: 1
        maximum: 100
    DeletionMode:
      name: mode
      in: query
      description: all_participants deletes for everybody; my_devices removes it from the caller's devices only. One of mode or destroy=true (the old spelling of all_participants) is required.
      schema:
        type: string
        enum: [all_participants, my_devices]
    Destroy:
      name: destroy
      in: query
      deprecated: true
      description: true is the old spelling of mode=all_participants.
      schema:
        type: string
        enum: ['true']
    Expires:
      name: expires
      in: query
      required: true
      description: Expiry of the signed URL (Unix seconds), as handed out.
      schema:
        type: string
    Signature:
      name: signature
      in: query
      required: true
      description: Signature of the signed URL, as handed out.
      schema:
        type: string
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
    LayerCount:
      description: How many items the whole list has (not only this page).
      required: true
      schema:
        type: integer
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
    LayerChallenge:
      description: The challenge of the authentication protocol, with the fresh nonce of data.nonce.
      required: true
      schema:
        type: string
        pattern: '^Layer realm="[^"]*", nonce="[A-Za-z0-9_-]+"$'
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
    Readiness:
      description: Ready (200, every check ok) or not (503, the failing checks are unavailable). The checks are the database and the auth service.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Readiness'
    BadRequest:
      description: invalid_request (10) - the body is missing, is not JSON, or is not JSON of the right kind.
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
      description: user_suspended (6) - the session's user is suspended; access_denied (101) - the caller may not do this (for example a former participant writing to a conversation, someone other than the sender deleting a message for everybody, or a session bound to a client certificate that was revoked), or a signed URL that is invalid or expired.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    ServerAPIForbidden:
      description: access_denied (101) - the app may not do this to the resource.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    NotFound:
      description: not_found (102) - the resource does not exist, is not visible to the caller, or the path parameter is not an id of its kind.
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
    Conflict:
      description: conflict (108) - a distinct conversation with these participants exists with other metadata, data is that conversation; or id_in_use (111) - the client-chosen id is taken, data is the existing object when the caller may see it.
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
      description: missing_property (104) or invalid_property (105), data.property names the field (operations.<n>.<field> inside /sync operations); participant_blocked (110) - a participant has blocked the user being added; invalid_operation (9) - the change is not possible in the resource's state.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
    TooManyRequests:
      description: rate_limit_exceeded (7) - this client address made too many unauthenticated requests (each one costs a nonce).
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
      description: service_unavailable (1) - the auth service, which checks sessions and Server API tokens, could not be reached.
      headers:
        X-Request-Id:
          $ref: '#/components/headers/RequestId'
      content:
        application/json:
          schema:
            $ref: '#/components/schemas/Error'
"""
