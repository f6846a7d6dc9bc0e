// The schemas of the OpenAPI document (see OpenAPI.swift).
let openAPISchemas = """
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
