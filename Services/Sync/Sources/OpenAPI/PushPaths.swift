// The push endpoints in the sync service's OpenAPI document (see OpenAPI.swift). OpenAPI has no
// words for a WebSocket's packets; the description says where they are described.

let syncOpenAPIPushPaths = """
  /websocket:
    get:
      operationId: openWebSocket
      tags: [push]
      summary: Opens the WebSocket that pushes changes, signals and presence (Layer WebSocket API, subprotocol layer-3.0).
      description: 'Upgrade with Sec-WebSocket-Protocol layer-3.0 and a session (?session_token= or Authorization). Packets are JSON text frames {"type","timestamp","counter","body"}: change (create/update/delete of Conversation, Message, Identity), operation (Conversation.mark_all_read), signal (typing indicators and signals from other services) and response; clients send request (Message.create, Conversation.create, Counter.read, Event.replay, Presence.subscribe, Presence.update, Presence.sync) and signal (typing_indicator). ?anchor=<seq> first sends every change after that changelog seq. A bad upgrade is accepted and closed at once with code 4000 + the HTTP status of the error (4401 no session, 4406 no subprotocol, 4422 bad anchor); later closes are 4401 (session ended), 1013 (too far behind; resume from the changelog) and 1001 (server shutting down). Without an Upgrade header the request is answered with the error as JSON.'
      security:
        - layerSession: []
      parameters:
        - name: anchor
          in: query
          required: false
          schema:
            type: integer
            minimum: 0
          description: Send every change after this changelog seq first.
      responses:
        '101':
          description: Switching to the WebSocket protocol.
\(syncErrors([400, 401, 406, 422, 500]))
  /events:
    get:
      operationId: streamEvents
      tags: [push]
      summary: Streams the user's changes as Server-Sent Events.
      description: 'Each change of the user''s changelog is an event whose id is its seq, whose event is its type (new_message, update_status, …) and whose data is the operation as POST /sync returns it. Last-Event-ID (or ?anchor=) resumes right after that seq. Typing indicators, presence and signals come as events without an id (typing_indicator, presence, signal). A comment line every few seconds keeps proxies from closing an idle stream; the stream ends when the session does.'
      security:
        - layerSession: []
      parameters:
        - name: Last-Event-ID
          in: header
          required: false
          schema:
            type: string
          description: The id of the last event received; the stream resumes after it.
        - name: anchor
          in: query
          required: false
          schema:
            type: integer
            minimum: 0
          description: Resume after this changelog seq (when Last-Event-ID cannot be set).
      responses:
        '200':
          description: The event stream.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            text/event-stream:
              schema:
                type: string
\(syncErrors([401, 406, 422, 500]))
"""
