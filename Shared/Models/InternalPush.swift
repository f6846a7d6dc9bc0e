import Foundation

/// The apps' push providers between the services. The sync service owns them (it sends the
/// pushes and seals the keys); the operator sets them through the admin API, which the auth
/// service serves and relays here, so that there is one door for the operator and one owner for
/// the credentials.
extension InternalAPI {
    /// `POST /internal/v1/push/providers` (sync service), a ``PushProvidersRequest``: shows,
    /// sets or removes an app's APNs or FCM credentials, and answers the app's providers as the
    /// admin API shows them (`{"apns": {…} | null, "fcm": {…} | null}`), never with a key.
    public static let pushProvidersPath = "/internal/v1/push/providers"

    public struct PushProvidersRequest: Codable, Sendable, Equatable {
        public enum Action: String, Codable, Sendable { case show, set, remove }

        public var appID: UUID
        public var action: Action
        /// `apns` or `fcm`, for `set` and `remove`.
        public var provider: String?
        /// The body of the operator's `PUT`, as it came.
        public var credentials: JSONValue?

        public init(appID: UUID, action: Action, provider: String? = nil, credentials: JSONValue? = nil) {
            self.appID = appID
            self.action = action
            self.provider = provider
            self.credentials = credentials
        }

        enum CodingKeys: String, CodingKey {
            case action, provider, credentials
            case appID = "app_id"
        }
    }
}
