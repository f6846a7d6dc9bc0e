import Crypto
import Foundation
import Hummingbird
import LayerModels
import LayerServer

/// `GET /turn-credentials`: time-limited credentials for the TURN server, by the TURN REST API
/// convention coturn implements with `use-auth-secret`: the user name is the expiry time and the
/// user id, the password the HMAC-SHA1 of the user name under the secret both servers share. The
/// TURN server checks them itself; nothing is stored.
struct TurnController: Sendable {
    let secret: String?
    let uris: [String]
    let ttlSeconds: Int
    let stunPort: @Sendable () -> Int

    func addRoutes(to router: some RouterMethods<LayerRequestContext>) {
        router.get("turn-credentials", use: credentials)
    }

    @Sendable func credentials(_ request: Request, context: LayerRequestContext) async throws -> Response {
        let session = try context.requireSession()
        guard let secret else { throw APIError(.serviceUnavailable, "No TURN server is configured.") }
        let expiry = Int(Date().timeIntervalSince1970) + ttlSeconds
        let username = "\(expiry):\(session.userID)"
        let password = Self.password(username: username, secret: secret)
        // The STUN server of this service, on the host the client reached it by.
        let host = request.head.authority.map(Self.hostOnly) ?? "127.0.0.1"
        let stun = "stun:\(host.contains(":") ? "[\(host)]" : host):\(stunPort())"
        let body: JSONValue = [
            "username": .string(username), "password": .string(password), "ttl": .number(Double(ttlSeconds)),
            "uris": .array((uris + (uris.contains(where: { $0.hasPrefix("stun:") }) ? [] : [stun])).map { .string($0) }),
        ]
        return try Response.json(body)
    }

    /// Base64 of HMAC-SHA1(secret, username): what coturn computes to check a TURN request.
    static func password(username: String, secret: String) -> String {
        Data(HMAC<Insecure.SHA1>.authenticationCode(for: Data(username.utf8), using: SymmetricKey(data: Data(secret.utf8))))
            .base64EncodedString()
    }

    /// `host:port`, `[v6]:port` or a bare host, without the port and brackets.
    static func hostOnly(_ authority: String) -> String {
        if authority.hasPrefix("["), let end = authority.firstIndex(of: "]") {
            return String(authority[authority.index(after: authority.startIndex)..<end])
        }
        if authority.filter({ $0 == ":" }).count == 1, let colon = authority.firstIndex(of: ":") {
            return String(authority[..<colon])
        }
        return authority
    }
}
