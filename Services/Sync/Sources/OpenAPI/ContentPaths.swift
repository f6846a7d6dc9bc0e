// The rich content routes of the sync service's OpenAPI document (see OpenAPI.swift).

let syncOpenAPIContentPaths = """
  /content:
    post:
      operationId: createContent
      tags: [content]
      summary: Opens an upload slot for rich content (a payload over 2 KiB), owned by the caller. No body.
      description: 'Then PUT the bytes to upload_url, and send a message part with content: {id}. The slot takes exactly the declared number of bytes, once.'
      security:
        - layerSession: []
      parameters:
        - name: Upload-Content-Type
          in: header
          required: true
          description: The MIME type of the payload (type/subtype, parameters allowed); downloads are served with it.
          schema:
            type: string
          example: image/png
        - name: Upload-Content-Length
          in: header
          required: true
          description: The exact size of the payload in bytes, above 0 and at most the service limit (LAYER_CONTENT_MAX_BYTES, 50 MiB by default; 413 above it).
          schema:
            type: integer
            minimum: 1
          example: 4096
        - name: Upload-Origin
          in: header
          description: The web origin that will download the payload (https://host[:port]); checked for shape only.
          schema:
            type: string
      responses:
\(syncJSONResponse(201, "The upload slot: upload_url is set, download_url and expiration are null.", "Content", location: true))
\(syncErrors([401, 403, 406, 413, 422, 429, 500, 503]))
  /content/{content}:
    parameters:
      - $ref: '#/components/parameters/Content'
    get:
      operationId: getContent
      tags: [content]
      summary: Uploaded content with a fresh download URL (to refresh an expired one).
      description: The caller's own content, or content that a message they see refers to. Content whose bytes never arrived is not found.
      security:
        - layerSession: []
      responses:
\(syncJSONResponse(200, "The content, with download_url and expiration.", "Content"))
\(syncErrors([401, 403, 404, 406, 429, 500, 503]))
  /content/{content}/upload:
    parameters:
      - $ref: '#/components/parameters/Content'
      - $ref: '#/components/parameters/Expires'
      - $ref: '#/components/parameters/Signature'
    put:
      operationId: uploadContent
      tags: [content]
      summary: Uploads the bytes of a content slot to its signed upload_url. No Accept header needed.
      description: The body is stored as it arrives; it must be exactly Upload-Content-Length bytes (more stop the upload with 413, fewer are refused with 422) and nothing is kept otherwise. A slot takes one upload.
      security:
        - signedURL: []
      requestBody:
        required: true
        content:
          '*/*':
            schema:
              type: string
              format: binary
      responses:
\(syncJSONResponse(200, "The stored content, with download_url and expiration.", "Content"))
\(syncErrors([403, 404, 413, 422, 500]))
  /content/{content}/download:
    parameters:
      - $ref: '#/components/parameters/Content'
      - $ref: '#/components/parameters/Expires'
      - $ref: '#/components/parameters/Signature'
    get:
      operationId: downloadContent
      tags: [content]
      summary: The bytes of uploaded content, from its signed download_url. No Accept header needed.
      security:
        - signedURL: []
      responses:
        '200':
          description: The payload, with the Content-Type it was uploaded with and its Content-Length.
          headers:
            X-Request-Id:
              $ref: '#/components/headers/RequestId'
          content:
            '*/*':
              schema:
                type: string
                format: binary
\(syncErrors([403, 404, 500]))
"""
