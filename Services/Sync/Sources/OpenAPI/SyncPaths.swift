// `POST /sync` and its schemas in the sync service's OpenAPI document (see OpenAPI.swift).

let syncOpenAPISyncPaths = """
  /sync:
    post:
      operationId: sync
      tags: [sync]
      summary: Exchanges changelogs with the server.
      description: 'A device hands in the operations it queued (all applied in one transaction, or none) and its anchor, and gets back the operations of its user''s changelog after that anchor. Of several operations of one type on one message, only the last counts; for new_message with an existing id the last write wins, tags are merged and a status only goes up. At anchor 0 (or without one) the answer is the latest state instead, one operation per object, with the messages the policy asks for. The anchor is opaque: send back the one you got. When more is true, ask again with the new anchor.'
      security:
        - layerSession: []
      requestBody:
        required: true
        description: At most 4 MiB.
        content:
          application/json:
            schema:
              $ref: '#/components/schemas/SyncRequest'
      responses:
        '200':
          description: The operations after the anchor, and the new anchor.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            application/json:
              schema:
                $ref: '#/components/schemas/SyncResponse'
\(syncErrors([400, 401, 403, 404, 406, 409, 413, 422, 429, 500, 503]))
"""

let syncOpenAPIChangelogSchemas = """
    SyncRequest:
      type: object
      additionalProperties: false
      properties:
        anchor:
          type: [integer, string, 'null']
          description: 0 (the default) for the latest state, otherwise an anchor an earlier answer gave.
        limit:
          type: integer
          minimum: 1
          maximum: 5000
          description: The most operations to return (default 500).
        policy:
          type: string
          enum: [complete, unread_only, partial]
          description: 'At anchor 0, which messages come with each conversation: all of them, those from the first unread one on (the default; at least the last message), or the last partial_count.'
        partial_count:
          type: integer
          minimum: 1
          maximum: 1000
          description: How many recent messages of each conversation the partial policy returns (default 20).
        operations:
          type: array
          maxItems: 500
          items:
            $ref: '#/components/schemas/ClientOperation'
    ClientOperation:
      type: object
      additionalProperties: false
      required: [type, message_id]
      description: 'One queued operation of a device: new_message (message_id, conversation_id, parts, optionally notification), update_status (message_id, status) or update_tags (message_id, tags). update_tags stays in the user''s own changelog; the other two reach every participant.'
      properties:
        type:
          type: string
          enum: [new_message, update_status, update_tags]
        message_id:
          type: string
          description: layer:///messages/<uuid> or the bare UUID; for new_message, the id the device chose.
        conversation_id:
          type: string
        parts:
          type: array
          minItems: 1
          maxItems: 64
          items:
            $ref: '#/components/schemas/PartInput'
        notification:
          type: [object, 'null']
        status:
          type: string
          enum: [delivered, delivery, read]
        tags:
          type: array
          minItems: 1
          maxItems: 32
          items:
            type: string
            minLength: 1
            maxLength: 64
    SyncResponse:
      type: object
      additionalProperties: false
      required: [anchor, more, operations]
      properties:
        anchor:
          type: [integer, string]
          description: The anchor to send next time.
        more:
          type: boolean
          description: True when more operations follow; ask again with the new anchor.
        operations:
          type: array
          items:
            $ref: '#/components/schemas/Operation'
    Operation:
      type: object
      additionalProperties: false
      required: [seq, type]
      description: 'One change of the user''s changelog, in order of seq (in a latest-state answer, every operation carries the seq the state is as of). new_conversation and update_conversation carry the whole conversation as the user sees it; new_message carries the message and its parts; update_status carries the identity whose status changed (user_id, identity_id) and status, and for mark_all_read the position up to which everything is read; update_tags carries the user''s tags of the message; delete_conversation and delete_message carry mode, and a my_devices deletion of a conversation from_position (the messages up to it are gone for this user).'
      properties:
        seq:
          type: integer
          minimum: 0
        type:
          type: string
          enum: [new_message, update_status, update_tags, new_conversation, update_conversation, delete_conversation, delete_message]
        conversation_id:
          type: string
          pattern: '^layer:///conversations/[0-9a-f-]{36}$'
        message_id:
          type: string
          pattern: '^layer:///messages/[0-9a-f-]{36}$'
        conversation:
          $ref: '#/components/schemas/Conversation'
        message:
          $ref: '#/components/schemas/Message'
        parts:
          type: array
          items:
            $ref: '#/components/schemas/MessagePart'
        user_id:
          type: string
        identity_id:
          type: string
          pattern: '^layer:///identities/'
        status:
          type: string
          enum: [delivered, read]
        position:
          type: integer
        tags:
          type: array
          items:
            type: string
        mode:
          type: string
          enum: [all_participants, my_devices]
        from_position:
          type: integer
"""
