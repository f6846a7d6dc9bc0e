// The Client API routes of the OpenAPI document (see OpenAPI.swift).
let openAPIClientPaths = """
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
"""
