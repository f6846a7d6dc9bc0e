/// Why bytes are not a STUN message this codec accepts.
public enum STUNDecodingError: Error, Equatable, Sendable {
    /// Fewer bytes than the 20 of a header.
    case tooShort
    /// The two top bits are not zero or the magic cookie is missing: another protocol, or the
    /// RFC 3489 STUN that predates the cookie.
    case notSTUN
    /// The header's length is not a multiple of 4 or not what follows the header.
    case badLength
    /// An attribute, with its padding, runs past the end of the message.
    case truncatedAttribute
    /// A FINGERPRINT that is not the last attribute.
    case misplacedFingerprint
    /// A FINGERPRINT whose value is not the CRC-32 of the message before it.
    case badFingerprint
    /// The value of an attribute of this type does not have the shape its RFC gives it.
    case malformedAttribute(STUNAttributeType)
}
