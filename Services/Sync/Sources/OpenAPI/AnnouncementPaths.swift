// The announcement routes and schemas of the sync service's OpenAPI document (see OpenAPI.swift).
// The Server API sends announcements (ServerPaths.swift); its recipients read them here.

let syncOpenAPIAnnouncementPaths = """
  /announcements:
    get:
      operationId: listAnnouncements
      tags: [announcements]
      summary: The announcements sent to the caller, newest first.
      security:
        - layerSession: []
      parameters:
        - $ref: '#/components/parameters/PageSize'
        - name: from_id
          in: query
          description: Returns the announcements before this one (layer:///announcements/<uuid> or the bare UUID).
          schema:
            type: string
      responses:
\(syncJSONResponse(200, "A page of announcements.", "AnnouncementList", list: true))
\(syncErrors([401, 403, 406, 422, 429, 500, 503]))
  /announcements/{announcement}:
    parameters:
      - $ref: '#/components/parameters/Announcement'
    get:
      operationId: getAnnouncement
      tags: [announcements]
      summary: An announcement sent to the caller.
      security:
        - layerSession: []
      responses:
\(syncJSONResponse(200, "The announcement.", "Announcement"))
\(syncErrors([401, 403, 404, 406, 429, 500, 503]))
    delete:
      operationId: deleteAnnouncement
      tags: [announcements]
      summary: Removes an announcement from the caller's devices.
      security:
        - layerSession: []
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 403, 404, 406, 429, 500, 503]))
  /announcements/{announcement}/receipts:
    parameters:
      - $ref: '#/components/parameters/Announcement'
    post:
      operationId: sendAnnouncementReceipt
      tags: [announcements]
      summary: Marks an announcement delivered or read for the caller; a status never goes back.
      security:
        - layerSession: []
\(syncJSONBody("Receipt", description: "At most 64 KiB."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 403, 404, 406, 413, 422, 429, 500, 503]))
"""

/// An announcement schema: as its recipient sees it (`is_unread`, only their own status) or in
/// the system view of the Server API (`recipients`, every recipient's status).
private func announcementSchema(_ name: String, viewer: Bool) -> String {
    let required = ["id", "url", "receipts_url", "position", "conversation", "parts", "sent_at", "sender"]
        + (viewer ? ["is_unread"] : ["recipients"]) + ["recipient_status", "notification"]
    let view =
        viewer
        ? " as its recipient sees it (recipient_status holds only the recipient)"
        : " in the system view of the Server API (every recipient and their status)"
    let head = """
            \(name):
              type: object
              additionalProperties: false
              description: An announcement\(view). Shaped like a message without a conversation.
              required: [\(required.joined(separator: ", "))]
              properties:
                id:
                  type: string
                  pattern: '^layer:///announcements/[0-9a-f-]{36}$'
                url:
                  type: string
                receipts_url:
                  type: string
                position:
                  type: integer
                conversation:
                  type: 'null'
                parts:
                  type: array
                  items:
                    $ref: '#/components/schemas/MessagePart'
                sent_at:
                  type: string
                  format: date-time
                sender:
                  $ref: '#/components/schemas/Sender'
                recipient_status:
                  type: object
                  additionalProperties:
                    type: string
                    enum: [sent, delivered, read]
                notification:
                  type: [object, 'null']
        """
    let perView =
        viewer
        ? """
                    is_unread:
                      type: boolean
            """
        : """
                    recipients:
                      type: array
                      items:
                        type: string
                        pattern: '^layer:///identities/'
            """
    return [head, perView].joined(separator: "\n")
}

let syncOpenAPIAnnouncementSchemas = """
\(announcementSchema("Announcement", viewer: true))
\(announcementSchema("SystemAnnouncement", viewer: false))
    AnnouncementList:
      type: array
      items:
        $ref: '#/components/schemas/Announcement'
    CreateAnnouncement:
      type: object
      additionalProperties: false
      required: [recipients, parts]
      description: 'The sender is sender_id (an identity id or user id of an existing user), or sender with exactly one of user_id and name (a non-human sender such as Support).'
      properties:
        recipients:
          type: array
          minItems: 1
          maxItems: 1000
          description: Identity ids or user ids.
          items:
            type: [string, object]
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
"""
