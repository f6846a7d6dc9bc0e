/// The value of ERROR-CODE (RFC 8489 section 14.8): a code from 300 to 699 and a reason phrase
/// for people.
public struct STUNErrorCode: Sendable, Equatable {
    public var code: Int
    public var reason: String

    public init(_ code: Int, reason: String) {
        precondition((300...699).contains(code), "a STUN error code lies between 300 and 699")
        self.code = code
        self.reason = reason
    }

    public static let badRequest = STUNErrorCode(400, reason: "Bad Request")
    public static let unknownAttribute = STUNErrorCode(420, reason: "Unknown Attribute")
}
