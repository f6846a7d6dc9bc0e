// The Server API routes of the sync service's OpenAPI document (see OpenAPI.swift): what an
// app's backend does under /apps/{app} with a Server API token. The rest of the Server API
// (the app's settings, users' sessions and suspension) is the auth service's.

/// The security requirement and tag of a Server API operation, at the indentation of its fields.
private let serverAPI = """
      tags: [server]
      security:
        - serverAPIToken: []
"""

/// The `If-None-Match` request tag of a Server API create.
private let requestTag = """
      parameters:
        - $ref: '#/components/parameters/RequestTag'
"""

let syncOpenAPIServerPaths = """
  /apps/{app}/conversations:
    parameters:
      - $ref: '#/components/parameters/App'
    post:
      operationId: serverCreateConversation
\(serverAPI)
      summary: Creates a conversation of the given participants (the app is not one of them).
\(requestTag)
\(syncJSONBody("ServerCreateConversation", description: "At most 64 KiB."))
      responses:
\(syncJSONResponse(201, "The new conversation, in the system view (also when a repeated If-None-Match finds it).", "SystemConversation", location: true))
\(syncJSONResponse(200, "The distinct conversation of these participants that already existed.", "SystemConversation", location: true))
\(syncErrors([400, 401, 404, 406, 409, 413, 422, 500, 503], serverAPI: true))
  /apps/{app}/conversations/{conversation}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/Conversation'
    get:
      operationId: serverGetConversation
\(serverAPI)
      summary: A conversation in the system view (every participant, also conversations users left).
      responses:
\(syncJSONResponse(200, "The conversation.", "SystemConversation"))
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
    patch:
      operationId: serverUpdateConversation
\(serverAPI)
      summary: Changes participants (add, remove, set with identity ids) or metadata (set, delete).
\(syncJSONBody("LayerPatch", description: "At most 64 KiB.", patch: true))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
    delete:
      operationId: serverDeleteConversation
\(serverAPI)
      summary: Deletes a conversation for everybody; deleting it again succeeds too.
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
  /apps/{app}/conversations/{conversation}/messages:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/Conversation'
    get:
      operationId: serverListMessages
\(serverAPI)
      summary: Every message of a conversation, newest first, in the system view.
      parameters:
        - $ref: '#/components/parameters/PageSize'
        - name: from_id
          in: query
          description: Returns the messages before this one.
          schema:
            type: string
      responses:
\(syncJSONResponse(200, "A page of messages.", "SystemMessageList", list: true))
\(syncErrors([401, 404, 406, 422, 500, 503], serverAPI: true))
    post:
      operationId: serverSendMessage
\(serverAPI)
      summary: Sends a message as a participant (sender_id, or sender.user_id) or as a named system sender (sender.name).
\(requestTag)
\(syncJSONBody("ServerSendMessage", description: "At most 256 KiB."))
      responses:
\(syncJSONResponse(201, "The message in the system view (also when a repeated If-None-Match finds it).", "SystemMessage"))
\(syncErrors([400, 401, 404, 406, 409, 413, 422, 500, 503], serverAPI: true))
  /apps/{app}/conversations/{conversation}/messages/{message}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/Conversation'
      - $ref: '#/components/parameters/Message'
    get:
      operationId: serverGetMessage
\(serverAPI)
      summary: A message of the conversation, in the system view.
      responses:
\(syncJSONResponse(200, "The message.", "SystemMessage"))
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
    delete:
      operationId: serverDeleteMessage
\(serverAPI)
      summary: Deletes a message for every participant.
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/conversations:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    get:
      operationId: serverListUserConversations
\(serverAPI)
      summary: A user's conversations as they see them (with unread counts and last messages, without what they deleted from their devices).
      parameters:
        - $ref: '#/components/parameters/PageSize'
        - name: from_id
          in: query
          description: Returns the conversations after this one.
          schema:
            type: string
        - name: sort_by
          in: query
          schema:
            type: string
            enum: [created_at, last_message]
      responses:
\(syncJSONResponse(200, "A page of conversations.", "ConversationList", list: true))
\(syncErrors([401, 404, 406, 422, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/conversations/{conversation}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
      - $ref: '#/components/parameters/Conversation'
    get:
      operationId: serverGetUserConversation
\(serverAPI)
      summary: A conversation as the user sees it.
      responses:
\(syncJSONResponse(200, "The conversation.", "Conversation"))
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/conversations/{conversation}/mark_all_read:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
      - $ref: '#/components/parameters/Conversation'
    post:
      operationId: serverMarkAllRead
\(serverAPI)
      summary: Marks the user's messages of the conversation read, up to a position or all of them.
\(syncJSONBody("MarkAllRead", required: false, description: "Optional."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/conversations/{conversation}/messages:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
      - $ref: '#/components/parameters/Conversation'
    get:
      operationId: serverListUserMessages
\(serverAPI)
      summary: The messages of a conversation as the user sees them, newest first.
      parameters:
        - $ref: '#/components/parameters/PageSize'
        - name: from_id
          in: query
          description: Returns the messages before this one.
          schema:
            type: string
      responses:
\(syncJSONResponse(200, "A page of messages.", "MessageList", list: true))
\(syncErrors([401, 404, 406, 422, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/messages/{message}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
      - $ref: '#/components/parameters/Message'
    delete:
      operationId: serverDeleteUserMessage
\(serverAPI)
      summary: As the user, deletes a message from their devices (mode=my_devices) or for everybody (mode=all_participants, their own messages only).
      parameters:
        - $ref: '#/components/parameters/DeletionMode'
        - $ref: '#/components/parameters/Destroy'
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 403, 404, 406, 422, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/messages/{message}/receipts:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
      - $ref: '#/components/parameters/Message'
    post:
      operationId: serverSendReceipt
\(serverAPI)
      summary: As the user, marks a message delivered or read.
\(syncJSONBody("Receipt", description: "At most 64 KiB."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/identity:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    post:
      operationId: serverCreateIdentity
\(serverAPI)
      summary: Creates the user's identity (display_name required); the user need not exist yet.
\(syncJSONBody("IdentityInput", description: "At most 64 KiB."))
      responses:
        '201':
          description: Created; no body.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
\(syncErrors([400, 401, 404, 406, 409, 413, 422, 500, 503], serverAPI: true))
    get:
      operationId: serverGetIdentity
\(serverAPI)
      summary: The user's identity.
      responses:
\(syncJSONResponse(200, "The identity.", "Identity"))
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
    put:
      operationId: serverReplaceIdentity
\(serverAPI)
      summary: Replaces every field of the identity (absent ones become null); display_name is required.
\(syncJSONBody("IdentityInput", description: "At most 64 KiB."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
    patch:
      operationId: serverUpdateIdentity
\(serverAPI)
      summary: Changes identity fields with set (and metadata.<key> with set and delete).
\(syncJSONBody("LayerPatch", description: "At most 64 KiB.", patch: true))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
    delete:
      operationId: serverDeleteIdentity
\(serverAPI)
      summary: Deletes the user's identity.
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/blocks:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
    get:
      operationId: serverListBlocks
\(serverAPI)
      summary: The users this user blocked; their messages do not reach this user.
      responses:
\(syncJSONResponse(200, "The blocked users' identities.", "BasicIdentityList"))
\(syncErrors([401, 404, 406, 500, 503], serverAPI: true))
    post:
      operationId: serverAddBlock
\(serverAPI)
      summary: Blocks a user, named by user_id or identity id.
\(syncJSONBody("Block", description: "At most 64 KiB."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
  /apps/{app}/users/{user}/blocks/{blocked}:
    parameters:
      - $ref: '#/components/parameters/App'
      - $ref: '#/components/parameters/User'
      - $ref: '#/components/parameters/Blocked'
    delete:
      operationId: serverRemoveBlock
\(serverAPI)
      summary: Unblocks a user.
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 404, 406, 422, 500, 503], serverAPI: true))
  /apps/{app}/announcements:
    parameters:
      - $ref: '#/components/parameters/App'
    post:
      operationId: serverCreateAnnouncement
\(serverAPI)
      summary: Sends an announcement to 1 to 1000 users, as a named system sender or as an existing user.
\(requestTag)
\(syncJSONBody("CreateAnnouncement", description: "At most 512 KiB."))
      responses:
        '202':
          description: Accepted; the announcement in the system view.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SystemAnnouncement'
\(syncErrors([400, 401, 404, 406, 413, 422, 500, 503], serverAPI: true))
"""

let syncOpenAPIServerSchemas = """
    ServerCreateConversation:
      type: object
      additionalProperties: false
      required: [participants]
      properties:
        participants:
          type: array
          minItems: 1
          maxItems: 25
          description: Identity ids, user ids, or objects with id or user_id.
          items:
            type: [string, object]
        distinct:
          type: boolean
          description: Default true; see POST /conversations.
        metadata:
          $ref: '#/components/schemas/Metadata'
    SenderInput:
      type: object
      additionalProperties: false
      description: Exactly one of user_id (an existing user) and name (a non-human sender).
      properties:
        user_id:
          type: string
        name:
          type: string
          minLength: 1
    ServerSendMessage:
      type: object
      additionalProperties: false
      required: [parts]
      description: 'The sender is sender_id (the identity id or user id of a current participant), or sender with exactly one of user_id and name.'
      properties:
        sender_id:
          type: string
        sender:
          $ref: '#/components/schemas/SenderInput'
        parts:
          type: array
          minItems: 1
          maxItems: 64
          items:
            $ref: '#/components/schemas/PartInput'
        notification:
          type: [object, 'null']
    IdentityInput:
      type: object
      additionalProperties: false
      required: [display_name]
      properties:
        display_name:
          type: string
          maxLength: 128
        avatar_url:
          type: string
          maxLength: 1024
        first_name:
          type: string
          maxLength: 128
        last_name:
          type: string
          maxLength: 128
        phone_number:
          type: string
          maxLength: 32
        email_address:
          type: string
          maxLength: 255
        public_key:
          type: string
        identity_type:
          type: string
          enum: [user, bot]
        metadata:
          type: object
          description: At most 16 string values.
          additionalProperties:
            type: string
    Block:
      type: object
      additionalProperties: false
      description: The user to block, by exactly one of user_id and id (an identity id).
      properties:
        user_id:
          type: string
        id:
          type: string
"""
