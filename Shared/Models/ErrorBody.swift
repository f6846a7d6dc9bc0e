/// The stable error identifiers of the public API (reference table 1.5), with their codes and
/// HTTP statuses.
public enum ErrorID: String, Sendable, Codable, CaseIterable {
    case serviceUnavailable = "service_unavailable"
    case invalidAppID = "invalid_app_id"
    case invalidRequestID = "invalid_request_id"
    case authenticationRequired = "authentication_required"
    case appSuspended = "app_suspended"
    case userSuspended = "user_suspended"
    case rateLimitExceeded = "rate_limit_exceeded"
    case requestTimeout = "request_timeout"
    case invalidOperation = "invalid_operation"
    case invalidRequest = "invalid_request"
    case internalServerError = "internal_server_error"
    case accessDenied = "access_denied"
    case notFound = "not_found"
    case missingProperty = "missing_property"
    case invalidProperty = "invalid_property"
    case invalidEndpoint = "invalid_endpoint"
    case invalidHeader = "invalid_header"
    case conflict = "conflict"
    case methodNotAllowed = "method_not_allowed"
    case participantBlocked = "participant_blocked"
    case idInUse = "id_in_use"
    /// Not in the original table: a body over the route's size limit (HTTP 413).
    case requestTooLarge = "request_too_large"

    public var code: Int {
        switch self {
        case .serviceUnavailable: 1
        case .invalidAppID: 2
        case .invalidRequestID: 3
        case .authenticationRequired: 4
        case .appSuspended: 5
        case .userSuspended: 6
        case .rateLimitExceeded: 7
        case .requestTimeout: 8
        case .invalidOperation: 9
        case .invalidRequest: 10
        case .internalServerError: 100
        case .accessDenied: 101
        case .notFound: 102
        case .missingProperty: 104
        case .invalidProperty: 105
        case .invalidEndpoint: 106
        case .invalidHeader: 107
        case .conflict: 108
        case .methodNotAllowed: 109
        case .participantBlocked: 110
        case .idInUse: 111
        case .requestTooLarge: 112
        }
    }

    public var status: Int {
        switch self {
        case .serviceUnavailable: 503
        case .invalidAppID, .appSuspended, .userSuspended, .accessDenied: 403
        case .invalidRequestID, .invalidRequest: 400
        case .authenticationRequired: 401
        case .rateLimitExceeded: 429
        case .requestTimeout: 408
        case .invalidOperation, .missingProperty, .invalidProperty, .participantBlocked: 422
        case .internalServerError: 500
        case .notFound, .invalidEndpoint: 404
        case .invalidHeader: 406
        case .conflict, .idInUse: 409
        case .methodNotAllowed: 405
        case .requestTooLarge: 413
        }
    }
}

/// The body of every error response: `{"id","code","message","url","data"}`.
public struct ErrorBody: Codable, Sendable, Equatable {
    public var id: String
    public var code: Int
    public var message: String
    public var url: String
    public var data: JSONValue?

    public init(_ id: ErrorID, message: String, data: JSONValue? = nil) {
        self.id = id.rawValue
        self.code = id.code
        self.message = message
        self.url = "https://github.com/layerline/layerline/blob/main/docs/errors.md#\(id.rawValue)"
        self.data = data
    }
}
