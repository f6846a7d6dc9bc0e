import Foundation
import LayerModels
import LayerServer
import Logging

/// Push notifications through APNs and FCM, as the API sees them: devices register their push
/// tokens, the operator sets each app's provider credentials (through the admin API, relayed by
/// the auth service), the app's backend reads the log of recent failures. The pushes themselves
/// are recorded by the database with each send and sent by ``PushNotifier``.
struct PushNotifications: Sendable {
    private let repositories: SyncRepositories
    private let secrets: SealedSecrets
    private let alarm: PushJobAlarm

    init(repositories: SyncRepositories, secrets: SealedSecrets, alarm: PushJobAlarm) {
        self.repositories = repositories
        self.secrets = secrets
        self.alarm = alarm
    }

    /// `POST /push_tokens`: what a device sends.
    struct TokenBody: Decodable, Sendable {
        var token: String?
        var type: String?
        var deviceID: String?
        var apnsBundleID: String?
        var gcmSenderID: String?
        var iosVersion: String?

        enum CodingKeys: String, CodingKey {
            case token, type
            case deviceID = "device_id"
            case apnsBundleID = "apns_bundle_id"
            case gcmSenderID = "gcm_sender_id"
            case iosVersion = "ios_version"
        }
        static let keys: Set<String> = ["token", "type", "device_id", "apns_bundle_id", "gcm_sender_id", "ios_version"]
    }

    /// Checks a registration; a 422 names the field that is wrong.
    static func token(from body: TokenBody) throws -> PushRepository.Token {
        guard let type = body.type else { throw APIError(.missingProperty, "Say the token's type.", property: "type") }
        let provider: PushProvider
        switch type {
        case "apns": provider = .apns
        case "gcm", "fcm": provider = .fcm
        default: throw APIError.invalid("type", "type is apns, gcm or fcm.")
        }
        guard let token = body.token else { throw APIError(.missingProperty, "Send the push token.", property: "token") }
        switch provider {
        case .apns:
            // APNs device tokens are hexadecimal (32 bytes today; Apple says they may grow).
            guard (16...400).contains(token.count), token.count % 2 == 0, token.allSatisfy(\.isHexDigit) else {
                throw APIError.invalid("token", "An APNs token is the device token in hexadecimal.")
            }
        case .fcm:
            guard (1...4096).contains(token.utf8.count),
                token.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 })
            else { throw APIError.invalid("token", "An FCM registration token is 1 to 4096 printable characters.") }
        }
        guard let device = body.deviceID else {
            throw APIError(.missingProperty, "Send the device's id.", property: "device_id")
        }
        guard (1...128).contains(device.utf8.count), !device.contains("/") else {
            throw APIError.invalid("device_id", "device_id is 1 to 128 characters without a slash.")
        }
        for (value, property, limit) in [
            (body.apnsBundleID, "apns_bundle_id", 255), (body.gcmSenderID, "gcm_sender_id", 128),
            (body.iosVersion, "ios_version", 32),
        ] {
            if let value, !(1...limit).contains(value.utf8.count) {
                throw APIError.invalid(property, "\(property) is 1 to \(limit) characters.")
            }
        }
        return PushRepository.Token(
            deviceID: device, provider: provider, token: provider == .apns ? token.lowercased() : token,
            apnsBundleID: body.apnsBundleID, gcmSenderID: body.gcmSenderID, iosVersion: body.iosVersion)
    }

    /// Registers the token of one of the scope's user's devices, tied to `session` (its
    /// reference), so that it is not pushed to while that session is connected.
    func register(_ body: TokenBody, session: String?, _ scope: Scope) async throws {
        try await repositories.pushNotifications.register(
            try Self.token(from: body), app: scope.app, user: scope.user, session: session ?? "", logger: scope.logger)
    }

    func unregister(device: String, _ scope: Scope) async throws {
        _ = try await repositories.pushNotifications.unregister(
            app: scope.app, user: scope.user, device: device, logger: scope.logger)
    }

    /// The operator's `GET`, `PUT` and `DELETE` of an app's providers; the app's providers after it.
    func providers(_ request: InternalAPI.PushProvidersRequest, logger: Logger) async throws -> JSONValue {
        let repository = repositories.pushNotifications
        switch request.action {
        case .show: break
        case .set:
            let provider = try Self.provider(request.provider)
            let credentials = try PushCredentials.parse(provider, request.credentials)
            try await repository.setProvider(
                app: request.appID, credentials: credentials, sealedKey: try secrets.seal(credentials.privateKey), logger: logger)
            try await changed(request.appID, logger: logger)
        case .remove:
            guard
                try await repository.removeProvider(
                    app: request.appID, provider: try Self.provider(request.provider), logger: logger)
            else { throw APIError.notFound("The app's \(request.provider ?? "") provider") }
            try await changed(request.appID, logger: logger)
        }
        let records = try await repository.providers(apps: [request.appID], logger: logger)
        var shown: [String: JSONValue] = ["apns": .null, "fcm": .null]
        for record in records { shown[record.provider.rawValue] = record.shown }
        return .object(shown)
    }

    private static func provider(_ name: String?) throws -> PushProvider {
        guard let name, let provider = PushProvider(rawValue: name) else {
            throw APIError.notFound("The provider \(name ?? "")")
        }
        return provider
    }

    /// Every replica reads the apps with providers again.
    private func changed(_ app: UUID, logger: Logger) async throws {
        alarm.providersChanged()
        try await PushChannel.publishProvidersChanged(app: app, postgres: repositories.postgres, logger: logger)
    }

    /// The app's latest push failures, newest first.
    func failures(_ scope: Scope, limit: Int) async throws -> [JSONValue] {
        try await repositories.pushNotifications.failures(app: scope.app, limit: limit, logger: scope.logger)
    }
}
