let authOpenAPI = """
openapi: 3.1.0
info:
  title: Layerline auth service
  version: "3.0"
paths: {}
"""
