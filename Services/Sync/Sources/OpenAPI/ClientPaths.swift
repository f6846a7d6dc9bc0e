// The Client API routes of conversations, messages, receipts and identities in the sync
// service's OpenAPI document (see OpenAPI.swift).

/// `text` as a single-quoted YAML scalar, safe whatever it contains.
func yamlQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
}

/// A response of `status` with a JSON body of `schema`, at the indentation of a `responses`
/// entry; `list` adds the `Layer-Count` header, `location` the `Location` header.
func syncJSONResponse(
    _ status: Int, _ description: String, _ schema: String, list: Bool = false, location: Bool = false
) -> String {
    var lines = ["        '\(status)':", "          description: \(yamlQuoted(description))", "          headers:"]
    lines += ["            X-Request-Id:", "              $ref: '#/components/headers/RequestId'"]
    if list { lines += ["            Layer-Count:", "              $ref: '#/components/headers/LayerCount'"] }
    if location { lines += ["            Location:", "              $ref: '#/components/headers/Location'"] }
    lines += [
        "          content:", "            application/json:", "              schema:",
        "                $ref: '#/components/schemas/\(schema)'",
    ]
    return lines.joined(separator: "\n")
}

/// A request body of `schema` (JSON, or a Layer-Patch with `patch`), at the indentation of an
/// operation's fields.
func syncJSONBody(_ schema: String, required: Bool = true, description: String? = nil, patch: Bool = false) -> String {
    var lines = ["      requestBody:", "        required: \(required)"]
    if let description { lines.append("        description: \(yamlQuoted(description))") }
    lines += [
        "        content:", "          \(patch ? "application/vnd.layer-patch+json" : "application/json"):",
        "            schema:", "              $ref: '#/components/schemas/\(schema)'",
    ]
    return lines.joined(separator: "\n")
}

let syncOpenAPIClientPaths = """
  /conversations:
    post:
      operationId: createConversation
      tags: [conversations]
      summary: Creates a conversation of the caller and the given participants (at most 25 in all).
      security:
        - layerSession: []
\(syncJSONBody("CreateConversation", description: "At most 64 KiB."))
      responses:
\(syncJSONResponse(201, "The new conversation.", "Conversation"))
\(syncJSONResponse(200, "The distinct conversation of these participants that already existed (same or no metadata requested).", "Conversation"))
\(syncErrors([400, 401, 403, 406, 409, 413, 422, 429, 500, 503]))
    get:
      operationId: listConversations
      tags: [conversations]
      summary: The caller's conversations, newest first, including those they left.
      security:
        - layerSession: []
      parameters:
        - $ref: '#/components/parameters/PageSize'
        - name: from_id
          in: query
          description: Returns the conversations after this one (layer:///conversations/<uuid> or the bare UUID).
          schema:
            type: string
        - name: sort_by
          in: query
          description: created_at (the default) or last_message (by the time of the last message).
          schema:
            type: string
            enum: [created_at, last_message]
      responses:
\(syncJSONResponse(200, "A page of conversations.", "ConversationList", list: true))
\(syncErrors([401, 403, 406, 422, 429, 500, 503]))
  /conversations/{conversation}:
    parameters:
      - $ref: '#/components/parameters/Conversation'
    get:
      operationId: getConversation
      tags: [conversations]
      summary: A conversation of the caller.
      security:
        - layerSession: []
      responses:
\(syncJSONResponse(200, "The conversation.", "Conversation"))
\(syncErrors([401, 403, 404, 406, 429, 500, 503]))
    patch:
      operationId: updateConversation
      tags: [conversations]
      summary: Changes participants (add, remove, set with identity ids), metadata (set, delete; metadata.a.b paths) or the caller's private_metadata.
      description: Adding or removing a participant makes a distinct conversation non-distinct. New participants see all earlier messages; removed ones keep what came before their removal.
      security:
        - layerSession: []
\(syncJSONBody("LayerPatch", description: "At most 64 KiB.", patch: true))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 403, 404, 406, 413, 422, 429, 500, 503]))
    delete:
      operationId: deleteConversation
      tags: [conversations]
      summary: Deletes a conversation for everybody, or removes it from the caller's devices (and with leave=true leaves it).
      security:
        - layerSession: []
      parameters:
        - $ref: '#/components/parameters/DeletionMode'
        - $ref: '#/components/parameters/Destroy'
        - name: leave
          in: query
          description: With mode=my_devices, also leave the conversation.
          schema:
            type: string
            enum: ['true', 'false', '1', '0']
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 403, 404, 406, 422, 429, 500, 503]))
  /conversations/{conversation}/mark_all_read:
    parameters:
      - $ref: '#/components/parameters/Conversation'
    post:
      operationId: markAllRead
      tags: [conversations]
      summary: Marks the caller's messages of the conversation read, up to a position or all of them.
      security:
        - layerSession: []
\(syncJSONBody("MarkAllRead", required: false, description: "Optional."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 403, 404, 406, 413, 422, 429, 500, 503]))
  /conversations/{conversation}/messages:
    parameters:
      - $ref: '#/components/parameters/Conversation'
    get:
      operationId: listMessages
      tags: [messages]
      summary: The messages of a conversation the caller sees, newest first.
      security:
        - layerSession: []
      parameters:
        - $ref: '#/components/parameters/PageSize'
        - name: from_id
          in: query
          description: Returns the messages before this one (layer:///messages/<uuid> or the bare UUID).
          schema:
            type: string
      responses:
\(syncJSONResponse(200, "A page of messages.", "MessageList", list: true))
\(syncErrors([401, 403, 404, 406, 422, 429, 500, 503]))
    post:
      operationId: sendMessage
      tags: [messages]
      summary: Sends a message to the conversation.
      security:
        - layerSession: []
\(syncJSONBody("SendMessage", description: "At most 256 KiB."))
      responses:
\(syncJSONResponse(201, "The message.", "Message"))
\(syncErrors([400, 401, 403, 404, 406, 409, 413, 422, 429, 500, 503]))
  /messages/{message}:
    parameters:
      - $ref: '#/components/parameters/Message'
    get:
      operationId: getMessage
      tags: [messages]
      summary: A message the caller sees.
      security:
        - layerSession: []
      responses:
\(syncJSONResponse(200, "The message.", "Message"))
\(syncErrors([401, 403, 404, 406, 429, 500, 503]))
    delete:
      operationId: deleteMessage
      tags: [messages]
      summary: Deletes a message for everybody (its sender only) or from the caller's devices.
      security:
        - layerSession: []
      parameters:
        - $ref: '#/components/parameters/DeletionMode'
        - $ref: '#/components/parameters/Destroy'
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([401, 403, 404, 406, 422, 429, 500, 503]))
  /messages/{message}/receipts:
    parameters:
      - $ref: '#/components/parameters/Message'
    post:
      operationId: sendReceipt
      tags: [messages]
      summary: Marks a message delivered or read for the caller; a status never goes back.
      security:
        - layerSession: []
\(syncJSONBody("Receipt", description: "At most 64 KiB."))
      responses:
        '204':
          $ref: '#/components/responses/NoContent'
\(syncErrors([400, 401, 403, 404, 406, 413, 422, 429, 500, 503]))
  /identities/{user}:
    parameters:
      - $ref: '#/components/parameters/User'
    get:
      operationId: getIdentity
      tags: [identities]
      summary: The identity of a user who shares a conversation with the caller (or of the caller).
      security:
        - layerSession: []
      responses:
\(syncJSONResponse(200, "The identity.", "Identity"))
\(syncErrors([401, 403, 404, 406, 429, 500, 503]))
"""
