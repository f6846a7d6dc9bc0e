// The Server API routes of the OpenAPI document (see OpenAPI.swift).
let openAPIServerPaths = """
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
"""
