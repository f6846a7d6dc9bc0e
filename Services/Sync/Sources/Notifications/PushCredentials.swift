import Foundation
import JWTKit
import LayerModels
import LayerServer

/// The two push services a device's token can belong to. A token registered as `gcm` (the name
/// FCM had when the original API was written) is an FCM token.
enum PushProvider: String, Sendable, CaseIterable, Codable {
    case apns
    case fcm
}

/// An app's credentials for one push service, as the operator sets them. The private key is
/// sealed at rest and never shown again; everything else is shown by the admin API.
enum PushCredentials: Sendable {
    /// Token-based APNs: the `.p8` signing key, its key id and the team it belongs to, the topic
    /// (the app's bundle id) used when a token does not name one, and which APNs to call.
    case apns(teamID: String, keyID: String, topic: String, sandbox: Bool, privateKey: String)
    /// FCM HTTP v1 with a service account: the project and the account's e-mail and private key.
    case fcm(projectID: String, clientEmail: String, privateKeyID: String?, privateKey: String)

    var provider: PushProvider {
        switch self {
        case .apns: .apns
        case .fcm: .fcm
        }
    }

    var privateKey: String {
        switch self {
        case .apns(_, _, _, _, let key), .fcm(_, _, _, let key): key
        }
    }

    /// What is kept in the clear and shown.
    var settings: JSONValue {
        switch self {
        case .apns(let team, let key, let topic, let sandbox, _):
            [
                "team_id": .string(team), "key_id": .string(key), "topic": .string(topic),
                "environment": sandbox ? "sandbox" : "production",
            ]
        case .fcm(let project, let email, let keyID, _):
            [
                "project_id": .string(project), "client_email": .string(email),
                "private_key_id": keyID.map(JSONValue.string) ?? .null,
            ]
        }
    }

    /// Credentials from their stored settings and the opened key.
    init?(provider: PushProvider, settings: JSONValue, privateKey: String) {
        switch provider {
        case .apns:
            guard let team = settings["team_id"]?.stringValue, let key = settings["key_id"]?.stringValue,
                let topic = settings["topic"]?.stringValue
            else { return nil }
            self = .apns(
                teamID: team, keyID: key, topic: topic, sandbox: settings["environment"] == "sandbox", privateKey: privateKey)
        case .fcm:
            guard let project = settings["project_id"]?.stringValue, let email = settings["client_email"]?.stringValue
            else { return nil }
            self = .fcm(
                projectID: project, clientEmail: email, privateKeyID: settings["private_key_id"]?.stringValue,
                privateKey: privateKey)
        }
    }

    /// Reads and checks the body of the operator's `PUT …/push/<provider>`; a 422 names the
    /// field that is wrong.
    static func parse(_ provider: PushProvider, _ body: JSONValue?) throws -> PushCredentials {
        guard case .object(let fields)? = body else {
            throw APIError(.invalidRequest, "The body is a JSON object of the provider's credentials.")
        }
        switch provider {
        case .apns:
            let allowed: Set<String> = ["team_id", "key_id", "private_key", "topic", "environment"]
            if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw APIError.invalid(unknown, "APNs credentials have no \(unknown).")
            }
            let team = try appleID(fields["team_id"], "team_id")
            let key = try appleID(fields["key_id"], "key_id")
            guard let topic = fields["topic"]?.stringValue, (1...255).contains(topic.utf8.count) else {
                throw APIError.invalid("topic", "topic is the app's bundle id (the apns-topic), 1 to 255 characters.")
            }
            let environment = fields["environment"]?.stringValue ?? "production"
            guard ["production", "sandbox"].contains(environment) else {
                throw APIError.invalid("environment", "environment is production or sandbox.")
            }
            guard let pem = fields["private_key"]?.stringValue, (try? ES256PrivateKey(pem: pem)) != nil else {
                throw APIError.invalid("private_key", "private_key is the PEM of the .p8 key (an ES256 private key).")
            }
            return .apns(teamID: team, keyID: key, topic: topic, sandbox: environment == "sandbox", privateKey: pem)
        case .fcm:
            if let unknown = fields.keys.sorted().first(where: { $0 != "service_account" }) {
                throw APIError.invalid(unknown, "FCM credentials are a service_account.")
            }
            // The key file as Google gives it: an object, or the file's text.
            var account = fields["service_account"]
            if let text = account?.stringValue { account = JSONValue(jsonText: text) }
            guard case .object(let file)? = account else {
                throw APIError.invalid("service_account", "service_account is the JSON key file of a Google service account.")
            }
            if let type = file["type"], type != "service_account" {
                throw APIError.invalid("service_account.type", "The key file must be a service_account's.")
            }
            guard let project = file["project_id"]?.stringValue, !project.isEmpty, project.utf8.count <= 128 else {
                throw APIError.invalid("service_account.project_id", "The key file names its project_id.")
            }
            guard let email = file["client_email"]?.stringValue, email.contains("@"), email.utf8.count <= 320 else {
                throw APIError.invalid("service_account.client_email", "The key file names its client_email.")
            }
            guard let pem = file["private_key"]?.stringValue, (try? Insecure.RSA.PrivateKey(pem: pem)) != nil else {
                throw APIError.invalid("service_account.private_key", "private_key is the account's PEM RSA private key.")
            }
            return .fcm(
                projectID: project, clientEmail: email, privateKeyID: file["private_key_id"]?.stringValue, privateKey: pem)
        }
    }

    /// Apple's team and key ids: ten letters and digits.
    private static func appleID(_ value: JSONValue?, _ property: String) throws -> String {
        guard let text = value?.stringValue, text.count == 10, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { throw APIError.invalid(property, "\(property) is Apple's ten-character id.") }
        return text
    }
}
