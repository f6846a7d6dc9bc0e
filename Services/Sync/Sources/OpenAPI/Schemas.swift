// The object schemas of the sync service's OpenAPI document (see OpenAPI.swift). They mirror
// Model/Objects.swift: every attribute is always written, empty ones as null, so they are all
// `required`; the per-viewer attributes exist only in a user's view, not in the Server API's
// system view, hence the System* variants.

/// A message schema: as a user sees it (`is_unread`, required) or in the system view (without);
/// `nullable` for `last_message`, which is null in a conversation without messages.
private func messageSchema(_ name: String, viewer: Bool, nullable: Bool = false) -> String {
    let required = ["id", "url", "receipts_url", "position", "conversation", "parts", "sent_at", "updated_at", "sender"]
        + (viewer ? ["is_unread"] : []) + ["recipient_status", "notification"]
    let view = viewer ? " as one user sees it" : " in the system view of the Server API (no per-user fields)"
    let absent = nullable ? "; null when the conversation has no message (yet) that the user sees" : ""
    let head = """
            \(name):
              type: \(nullable ? "[object, 'null']" : "object")
              additionalProperties: false
              description: A message\(view)\(absent).
              required: [\(required.joined(separator: ", "))]
              properties:
                id:
                  type: string
                  pattern: '^layer:///messages/[0-9a-f-]{36}$'
                url:
                  type: string
                receipts_url:
                  type: string
                position:
                  type: integer
                  description: The message's place in its conversation, increasing.
                conversation:
                  $ref: '#/components/schemas/ConversationReference'
                parts:
                  type: array
                  items:
                    $ref: '#/components/schemas/MessagePart'
                sent_at:
                  type: string
                  format: date-time
                received_at:
                  type: string
                  format: date-time
                updated_at:
                  type: [string, 'null']
                  format: date-time
                  description: When the parts last changed (a later write of the same message id through /sync).
                sender:
                  $ref: '#/components/schemas/Sender'
        """
    let unread = """
                is_unread:
                  type: boolean
                  description: Whether the viewer has not read it yet (false for their own messages).
        """
    let tail = """
                recipient_status:
                  type: object
                  description: The status of the message for each participant, by identity id; the sender has always read it.
                  additionalProperties:
                    type: string
                    enum: [sent, delivered, read]
                notification:
                  type: [object, 'null']
                  description: The push notification sent with it, as given by its sender.
        """
    return ([head] + (viewer ? [unread] : []) + [tail]).joined(separator: "\n")
}

/// A conversation schema: as a user sees it (with the per-user fields) or in the system view.
private func conversationSchema(_ name: String, viewer: Bool) -> String {
    let required = ["id", "url", "messages_url", "created_at", "participants", "distinct", "metadata"]
        + (viewer ? ["last_message", "unread_message_count", "total_message_count", "private_metadata"] : [])
    let view =
        viewer
        ? " as one user sees it (a former participant still sees it, with no participants)"
        : " in the system view of the Server API (no per-user fields)"
    let head = """
            \(name):
              type: object
              additionalProperties: false
              description: A conversation\(view).
              required: [\(required.joined(separator: ", "))]
              properties:
                id:
                  type: string
                  pattern: '^layer:///conversations/[0-9a-f-]{36}$'
                url:
                  type: string
                messages_url:
                  type: string
                created_at:
                  type: string
                  format: date-time
                participants:
                  type: array
                  items:
                    $ref: '#/components/schemas/BasicIdentity'
                distinct:
                  type: boolean
                  description: A distinct conversation is the one conversation of its set of participants; changing the participants makes it non-distinct.
                metadata:
                  $ref: '#/components/schemas/Metadata'
        """
    let perViewer = """
                last_message:
                  $ref: '#/components/schemas/LastMessage'
                unread_message_count:
                  type: integer
                  minimum: 0
                total_message_count:
                  type: integer
                  minimum: 0
                private_metadata:
                  $ref: '#/components/schemas/Metadata'
        """
    return ([head] + (viewer ? [perViewer] : [])).joined(separator: "\n")
}

let syncOpenAPISchemas = """
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
          description: Details; property names the field at fault, header the header. For conflict and id_in_use, the existing object.
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
    Metadata:
      type: object
      description: Values are strings or objects of the same kind, up to 8 levels deep.
      additionalProperties:
        $ref: '#/components/schemas/MetadataValue'
    MetadataValue:
      type: [string, object]
      additionalProperties:
        $ref: '#/components/schemas/MetadataValue'
    BasicIdentity:
      type: object
      additionalProperties: false
      required: [id, url, user_id, display_name, avatar_url, identity_type]
      properties:
        id:
          type: string
          pattern: '^layer:///identities/'
        url:
          type: string
        user_id:
          type: string
        display_name:
          type: [string, 'null']
        avatar_url:
          type: [string, 'null']
        identity_type:
          type: string
          enum: [user, bot]
          description: bot for the identities the app's backend made for its bots.
    Identity:
      type: object
      additionalProperties: false
      description: A full identity, filled in by the user's identity token claims or by the app's backend through the Server API.
      required: [id, url, user_id, display_name, avatar_url, identity_type, first_name, last_name, phone_number, email_address, public_key, metadata]
      properties:
        id:
          type: string
          pattern: '^layer:///identities/'
        url:
          type: string
        user_id:
          type: string
        display_name:
          type: [string, 'null']
        avatar_url:
          type: [string, 'null']
        identity_type:
          type: string
          enum: [user, bot]
        first_name:
          type: [string, 'null']
        last_name:
          type: [string, 'null']
        phone_number:
          type: [string, 'null']
        email_address:
          type: [string, 'null']
        public_key:
          type: [string, 'null']
        metadata:
          type: object
          additionalProperties:
            type: string
    Sender:
      type: object
      additionalProperties: false
      description: 'Either the identity of the user who sent the message (the BasicIdentity fields), or a system sender of the Server API: id and user_id null, display_name and name its name.'
      required: [id, user_id, display_name]
      properties:
        id:
          type: [string, 'null']
          pattern: '^layer:///identities/'
        url:
          type: string
        user_id:
          type: [string, 'null']
        display_name:
          type: [string, 'null']
        avatar_url:
          type: [string, 'null']
        identity_type:
          type: string
        name:
          type: string
    ConversationReference:
      type: object
      additionalProperties: false
      required: [id, url]
      properties:
        id:
          type: string
          pattern: '^layer:///conversations/[0-9a-f-]{36}$'
        url:
          type: string
    MessagePart:
      type: object
      additionalProperties: false
      description: A part of a message, or of an announcement (then its id is under the announcement's and message_url is the announcement's url).
      required: [id, url, message_url, mime_type, body, encoding, content, updated_at]
      properties:
        id:
          type: string
          pattern: '^layer:///(messages|announcements)/[0-9a-f-]{36}/parts/[0-9a-f-]{36}$'
        url:
          type: string
        message_url:
          type: string
        mime_type:
          type: string
        body:
          type: [string, 'null']
          description: The inline body (at most 2 KiB once decoded); null when the part refers to rich content.
        encoding:
          type: [string, 'null']
          enum: [base64, null]
        content:
          $ref: '#/components/schemas/PartContent'
        updated_at:
          type: [string, 'null']
          format: date-time
    PartContent:
      type: [object, 'null']
      additionalProperties: false
      description: The rich content a part refers to, with a fresh signed download URL; null for an inline part.
      required: [id, size, download_url, expiration, refresh_url, upload_url]
      properties:
        id:
          type: string
          pattern: '^layer:///content/[0-9a-f-]{36}$'
        size:
          type: integer
        download_url:
          type: string
        expiration:
          type: string
          format: date-time
        refresh_url:
          type: string
          description: GET it (with a session) for a new download_url once this one expired.
        upload_url:
          type: 'null'
    Content:
      type: object
      additionalProperties: false
      description: 'Rich content. Just created: upload_url is set and download_url and expiration are null. Uploaded: download_url and expiration are set and upload_url is null.'
      required: [id, size, download_url, expiration, refresh_url, upload_url]
      properties:
        id:
          type: string
          pattern: '^layer:///content/[0-9a-f-]{36}$'
        size:
          type: integer
          description: The size in bytes (as declared until the upload arrived).
        download_url:
          type: [string, 'null']
          description: A signed URL to GET the bytes, valid until expiration.
        expiration:
          type: [string, 'null']
          format: date-time
        refresh_url:
          type: [string, 'null']
        upload_url:
          type: [string, 'null']
          description: A signed URL to PUT the bytes to, once.
\(messageSchema("Message", viewer: true))
\(messageSchema("LastMessage", viewer: true, nullable: true))
\(messageSchema("SystemMessage", viewer: false))
\(conversationSchema("Conversation", viewer: true))
\(conversationSchema("SystemConversation", viewer: false))
    ConversationList:
      type: array
      items:
        $ref: '#/components/schemas/Conversation'
    MessageList:
      type: array
      items:
        $ref: '#/components/schemas/Message'
    SystemMessageList:
      type: array
      items:
        $ref: '#/components/schemas/SystemMessage'
    BasicIdentityList:
      type: array
      items:
        $ref: '#/components/schemas/BasicIdentity'
\(syncOpenAPIServerSchemas)
\(syncOpenAPIAnnouncementSchemas)
    CreateConversation:
      type: object
      additionalProperties: false
      properties:
        id:
          type: string
          description: A client-chosen id (a UUID or layer:///conversations/<uuid>); a retry answers 409 id_in_use with the conversation.
        participants:
          type: array
          maxItems: 25
          description: The other participants (the caller is added), as identity ids, user ids, or objects with id or user_id.
          items:
            type: [string, object]
        distinct:
          type: boolean
          description: Default true. A distinct conversation with the same participants is returned (200) instead of a new one, or 409 conflict when its metadata differ.
        metadata:
          $ref: '#/components/schemas/Metadata'
    PartInput:
      type: object
      required: [mime_type]
      properties:
        id:
          type: string
          description: A client-chosen part id (a UUID or layer:///messages/<message>/parts/<uuid>).
        mime_type:
          type: string
          description: Any MIME type of the form type/subtype, parameters allowed.
        body:
          type: string
          description: An inline body of at most 2 KiB once decoded; larger payloads go to /content.
        encoding:
          type: string
          enum: [base64]
        content:
          type: object
          required: [id]
          description: Rich content of the sender that was uploaded; instead of body.
          properties:
            id:
              type: string
            size:
              type: integer
    SendMessage:
      type: object
      additionalProperties: false
      required: [parts]
      properties:
        id:
          type: string
          description: A client-chosen id (a UUID or layer:///messages/<uuid>); a retry answers 409 id_in_use with the message.
        parts:
          type: array
          minItems: 1
          maxItems: 64
          items:
            $ref: '#/components/schemas/PartInput'
        notification:
          type: object
          description: The push notification (title, text, sound, recipients, ...), kept with the message.
    Receipt:
      type: object
      additionalProperties: false
      required: [type]
      properties:
        type:
          type: string
          enum: [delivery, read]
    MarkAllRead:
      type: object
      properties:
        position:
          type: [integer, 'null']
          minimum: 0
          description: Marks the messages up to and including this position read; without it, all of them.
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
\(syncOpenAPIChangelogSchemas)
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
          required: [database, auth]
          additionalProperties:
            type: string
            enum: [ok, unavailable]
"""
