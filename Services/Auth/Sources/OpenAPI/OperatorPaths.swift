// The operator API routes of the OpenAPI document (see OpenAPI.swift).
let openAPIOperatorPaths = """
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
"""
