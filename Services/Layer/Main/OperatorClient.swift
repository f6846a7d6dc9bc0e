import AsyncHTTPClient
import Foundation
import LayerModels
import LayerServer
import NIOCore
import NIOHTTP1

/// The operator API (`/admin/…`) over HTTP: what `layer admin` and `layer dev`'s demo set-up use.
struct OperatorClient {
    let baseURL: String
    let token: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Calls the operator API; or, with `bearer`, the API that token opens (`accept` says which).
    func call(
        _ method: HTTPMethod, _ path: String, body: JSONValue? = nil, bearer: String? = nil,
        accept: String = MediaType.layerJSON
    ) async throws -> JSONValue? {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(bearer ?? token)")
        request.headers.add(name: "Accept", value: accept)
        if let body {
            request.headers.add(name: "Content-Type", value: MediaType.json)
            request.body = .bytes(ByteBuffer(data: try StreamingJSONEncoder.data(body)))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1024 * 1024)
        guard (200..<300).contains(response.status.code) else {
            throw Failure(description: "\(method.rawValue) \(path) answered \(response.status.code): \(String(buffer: bytes))")
        }
        return bytes.readableBytes == 0 ? nil : try LayerJSONDecoder.make().decode(JSONValue.self, from: bytes)
    }

    func string(_ value: JSONValue?, _ key: String) throws -> String {
        guard let text = value?[key]?.stringValue else { throw Failure(description: "the answer has no '\(key)'") }
        return text
    }

    func createApp(name: String, allowedOrigins: [String] = []) async throws -> String {
        var body: [String: JSONValue] = ["name": .string(name)]
        if !allowedOrigins.isEmpty { body["allowed_origins"] = .array(allowedOrigins.map(JSONValue.string)) }
        return try string(try await call(.POST, "/admin/apps", body: .object(body)), "id")
    }

    func appExists(_ app: String) async throws -> Bool {
        do {
            _ = try await call(.GET, "/admin/apps/\(Self.segment(app))")
            return true
        } catch let failure as Failure where failure.description.contains("answered 404") {
            return false
        }
    }

    func createProvider(app: String) async throws -> String {
        try string(try await call(.POST, "/admin/apps/\(Self.segment(app))/providers", body: [:]), "id")
    }

    func registerKey(app: String, provider: String, publicKeyPEM: String) async throws -> String {
        try string(
            try await call(
                .POST, "/admin/apps/\(Self.segment(app))/providers/\(Self.segment(provider))/keys",
                body: ["public_key": .string(publicKeyPEM)]), "id")
    }

    /// Runs `body` with a Server API token of `app` minted for it, and revokes the token after.
    func withServerAPIToken<T>(app: String, _ body: (String) async throws -> T) async throws -> T {
        let tokens = "/admin/apps/\(Self.segment(app))/tokens"
        let minted = try await call(.POST, tokens)
        let token = try string(minted, "token")
        let id = try string(minted, "id")
        do {
            let result = try await body(token)
            _ = try await call(.DELETE, "\(tokens)/\(Self.segment(id))")
            return result
        } catch {
            _ = try? await call(.DELETE, "\(tokens)/\(Self.segment(id))")
            throw error
        }
    }

    func keyPath(app: String, provider: String, key: String) -> String {
        "/admin/apps/\(Self.segment(app))/providers/\(Self.segment(provider))/keys/\(Self.segment(key))"
    }

    /// The last segment of a Layer id (its UUID), which every path parameter accepts.
    static func segment(_ id: String) -> String {
        String(id.split(separator: "/").last ?? Substring(id))
    }
}
