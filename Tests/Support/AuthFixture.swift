import AsyncHTTPClient
import Foundation
import HummingbirdTLS
import LayerAuth
import LayerModels
import LayerNames
import LayerServer
import LayerSync
import LayerVoIP
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import _CryptoExtras

/// A live auth service with one app of its own: a provider, a registered RSA key and a signer
/// that mints identity tokens for it, as the app's backend would.
public struct AuthFixture: Sendable {
    public let server: LiveServer
    public let client: TestClient
    public let operatorToken: String
    public let internalTokens: InternalTokens
    public let app: TestApp

    /// An app registered through the operator API, with its key and token signer.
    public struct TestApp: Sendable {
        public let id: UUID
        public let providerID: String
        public let keyID: String
        public let signer: IdentityTokenSigner
        public var uri: String { LayerID(.apps, id).uri }

        public init(id: UUID, providerID: String, keyID: String, signer: IdentityTokenSigner) {
            self.id = id
            self.providerID = providerID
            self.keyID = keyID
            self.signer = signer
        }
    }

    /// Serves the auth service with an app of its own and runs `body` against it. With
    /// `tlsIdentity`, it serves HTTPS with that server certificate, asks clients for device
    /// certificates, and the fixture's client trusts the (self-signed) server certificate.
    public static func run<T: Sendable>(
        rateLimits: RateLimits = .init(
            nonces: .init(rate: 1000, burst: 1000), sessions: .init(rate: 1000, burst: 1000),
            certificates: .init(rate: 1000, burst: 1000)),
        settings: ServerSettings? = nil,
        tlsIdentity: TestTLS.ServerIdentity? = nil,
        caSource: AuthSettings.CASource = .database(secret: "test-ca-secret"),
        syncURL: String = "http://127.0.0.1:8082",
        logger: Logger = .test,
        withSync syncSettings: SyncSettings? = nil,
        withNames namesSettings: NamesSettings? = nil,
        withVoIP voipSettings: VoIPSettings? = nil,
        configure: @Sendable (inout AuthSettings) -> Void = { _ in },
        _ body: @Sendable (AuthFixture) async throws -> T
    ) async throws -> T {
        let operatorToken = Secrets.randomToken()
        var authSettings = AuthSettings(operatorToken: operatorToken, caSource: caSource, syncURL: syncURL)
        // With sync, as in `layer dev`: the sync service calls the auth service on the same listener.
        // VoIP rings devices through sync, so it brings sync along.
        let sync = syncSettings ?? (voipSettings != nil ? SyncSettings() : nil)
        if sync == nil {
            // Tests share one database, and any auth service reports any sign-in left unreported:
            // one with no sync service to report to would put off the sign-ins of other tests.
            authSettings.claimsReportInterval = .seconds(3600)
        }
        configure(&authSettings)
        var serverSettings = settings ?? ServerSettings()
        serverSettings.rateLimits = rateLimits
        if let tlsIdentity {
            serverSettings.tlsCertificatePath = tlsIdentity.certificatePath
            serverSettings.tlsKeyPath = tlsIdentity.keyPath
        }
        let services =
            [AuthService.configured(authSettings)] + (sync.map { [SyncService.configured($0)] } ?? [])
            + (namesSettings.map { [NamesService.configured($0)] } ?? [])
            + (voipSettings.map { [VoIPService.configured($0)] } ?? [])
        let internalTokens = serverSettings.internalTokens
        return try await LiveServer.run(services, settings: serverSettings, logger: logger) { server in
            func start(_ http: HTTPClient) async throws -> T {
                let client = TestClient(baseURL: server.baseURL, http: http)
                let fixture = AuthFixture(
                    server: server, client: client, operatorToken: operatorToken, internalTokens: internalTokens,
                    app: try await Self.registerApp(client: client, operatorToken: operatorToken, keyIndex: 0))
                return try await body(fixture)
            }
            guard let tlsIdentity else { return try await start(server.http) }
            // Shut the client down before the server stops, or the server waits for its close_notify.
            return try await TestTLS.using(try TestTLS.client(trusting: tlsIdentity.certificate), start)
        }
    }

    /// Registers a new app with a provider and key through the operator API.
    public static func registerApp(client: TestClient, operatorToken: String, keyIndex: Int) async throws -> TestApp {
        let auth = [("Authorization", "Bearer \(operatorToken)")]
        let app = try await client.request(.POST, "/admin/apps", headers: auth, json: ["name": "test app"])
        guard app.status == 201, let appURI = app.json?["id"]?.stringValue, let appID = LayerID(parsing: appURI, as: .apps)
        else { throw FixtureError("creating an app answered \(app.status): \(app.text)") }
        let provider = try await client.request(.POST, "/admin/apps/\(appID.uuid.lowercased)/providers", headers: auth, json: [:])
        guard provider.status == 201, let providerURI = provider.json?["id"]?.stringValue,
            let providerID = LayerID(parsing: providerURI, as: .providers)
        else { throw FixtureError("creating a provider answered \(provider.status): \(provider.text)") }
        let privateKey = try TestKeys.key(keyIndex)
        let key = try await client.request(
            .POST, "/admin/apps/\(appID.uuid.lowercased)/providers/\(providerID.uuid.lowercased)/keys", headers: auth,
            json: ["public_key": .string(privateKey.publicKey.pemRepresentation)])
        guard key.status == 201, let keyURI = key.json?["id"]?.stringValue else {
            throw FixtureError("registering a key answered \(key.status): \(key.text)")
        }
        return TestApp(
            id: appID.uuid, providerID: providerURI, keyID: keyURI,
            signer: IdentityTokenSigner(privateKey: privateKey, keyID: keyURI, providerID: providerURI))
    }

    /// Registers another app, with `TestKeys.key(keyIndex)` as its key.
    public func registerApp(keyIndex: Int) async throws -> TestApp {
        try await Self.registerApp(client: client, operatorToken: operatorToken, keyIndex: keyIndex)
    }

    public var operatorHeaders: [(String, String)] { [("Authorization", "Bearer \(operatorToken)")] }

    public func nonce() async throws -> String {
        let response = try await client.request(.POST, "/nonces")
        guard response.status == 201, let nonce = response.json?["nonce"]?.stringValue else {
            throw FixtureError("POST /nonces answered \(response.status): \(response.text)")
        }
        return nonce
    }

    /// A valid identity token for `user` on a fresh nonce.
    public func identityToken(user: String, app: TestApp? = nil, claims: [String: JSONValue] = [:]) async throws -> String {
        try (app ?? self.app).signer.token(userID: user, nonce: try await nonce(), extraClaims: claims)
    }

    public func createSession(token: String, app: TestApp? = nil, headers: [(String, String)] = []) async throws -> TestResponse {
        try await client.request(
            .POST, "/sessions", headers: headers,
            json: ["identity_token": .string(token), "app_id": .string((app ?? self.app).uri)])
    }

    /// A session token for `user`, through the whole nonce → identity token → session flow.
    public func session(user: String, app: TestApp? = nil, claims: [String: JSONValue] = [:]) async throws -> String {
        let response = try await createSession(token: try await identityToken(user: user, app: app, claims: claims), app: app)
        guard response.status == 201, let token = response.json?["session_token"]?.stringValue else {
            throw FixtureError("POST /sessions answered \(response.status): \(response.text)")
        }
        return token
    }

    public func serverAPIToken(app: TestApp? = nil) async throws -> String {
        let response = try await client.request(
            .POST, "/admin/apps/\((app ?? self.app).id.lowercased)/tokens", headers: operatorHeaders)
        guard response.status == 201, let token = response.json?["token"]?.stringValue else {
            throw FixtureError("minting a Server API token answered \(response.status): \(response.text)")
        }
        return token
    }

    public static func sessionHeader(_ token: String) -> [(String, String)] {
        [("Authorization", "Layer session-token=\"\(token)\"")]
    }
}

/// The services' own HTTP client in tests. Tests send their requests with `HTTPClient.shared`; if
/// the services called each other through that same client, a test with many requests in flight
/// could fill its connection pool and leave the services' inner calls waiting behind it.
let serviceHTTPClient = HTTPClient(eventLoopGroupProvider: .singleton)

public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// RSA keys are slow to make in a debug build, so the tests share a few.
public enum TestKeys {
    private static let keys = Mutex<[Int: _RSA.Signing.PrivateKey]>([:])

    public static func key(_ index: Int) throws -> _RSA.Signing.PrivateKey {
        if let key = keys.withLock({ $0[index] }) { return key }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        return keys.withLock { keys in
            if let existing = keys[index] { return existing }
            keys[index] = key
            return key
        }
    }
}
