// The OpenAPI 3.1 document of the sync service's public routes, served at `GET /openapi.yaml`.
let syncOpenAPI = """
openapi: 3.1.0
info:
  title: Layerline sync service
  version: '3.0'
paths: {}
"""
