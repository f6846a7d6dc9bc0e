import Foundation
import LayerModels
import LayerServer

/// Why an identity token (or a Layer CSR) was refused: the `eit_*` reasons of the original API.
struct TokenFailure: Error, Equatable {
    enum Reason: String, Sendable {
        case claimNotFound = "eit_claim_not_found"
        case claimWrongType = "eit_claim_wrong_type"
        case expired = "eit_expired"
        case headerParamNotFound = "eit_header_param_not_found"
        case headerParamWrongType = "eit_header_param_wrong_type"
        case headerParamWrongValue = "eit_header_param_wrong_value"
        case keyDeleted = "eit_key_deleted"
        case keyDisabled = "eit_key_disabled"
        case keyMalformed = "eit_key_malformed"
        case keyNotFound = "eit_key_not_found"
        case malformedBase64URL = "eit_malformed_base64url"
        case malformedJSON = "eit_malformed_json"
        case nonceNotFound = "eit_nonce_not_found"
        case notBefore = "eit_not_before"
        case providerNotBoundToApp = "eit_provider_not_bound_to_app"
        case providerNotFound = "eit_provider_not_found"
        case signatureVerificationFailed = "eit_signature_verification_failed"
        case userSuspended = "eit_user_suspended"
        case wrongJWSPartCount = "eit_wrong_jws_part_count"
    }

    var reason: Reason
    var message: String

    init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    /// The API error for a refused token in `property`: 422 `invalid_property` with the reason.
    func apiError(property: String) -> APIError {
        if reason == .userSuspended {
            return APIError(.userSuspended, message, data: ["property": .string(property), "reason": .string(reason.rawValue)])
        }
        return APIError(
            .invalidProperty, "Invalid \(property): \(message)", property: property,
            extra: ["reason": .string(reason.rawValue)])
    }
}

/// A JWS in compact serialization, split and decoded but not yet verified.
struct CompactJWS: Sendable {
    let header: [String: JSONValue]
    let payload: [String: JSONValue]
    /// `base64url(header) + "." + base64url(payload)`: the bytes the signature covers.
    let signingInput: Data
    let signature: Data

    init(_ token: String) throws(TokenFailure) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw TokenFailure(.wrongJWSPartCount, "a JWS has 3 dot-separated parts; this has \(parts.count).")
        }
        header = try Self.object(parts[0], name: "header")
        payload = try Self.object(parts[1], name: "claims")
        guard let signature = Data(base64URLEncoded: parts[2]) else {
            throw TokenFailure(.malformedBase64URL, "the signature is not base64url.")
        }
        self.signature = signature
        signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }

    private static func object(_ part: Substring, name: String) throws(TokenFailure) -> [String: JSONValue] {
        guard let data = Data(base64URLEncoded: part) else {
            throw TokenFailure(.malformedBase64URL, "the \(name) is not base64url.")
        }
        guard case .object(let object)? = try? LayerJSONDecoder.make().decode(JSONValue.self, from: data) else {
            throw TokenFailure(.malformedJSON, "the \(name) is not a JSON object.")
        }
        return object
    }

    // MARK: Typed access

    func headerString(_ name: String) throws(TokenFailure) -> String {
        guard let value = header[name] else {
            throw TokenFailure(.headerParamNotFound, "the header has no '\(name)'.")
        }
        guard case .string(let text) = value else {
            throw TokenFailure(.headerParamWrongType, "the header's '\(name)' must be a string.")
        }
        return text
    }

    func requireHeader(_ name: String, oneOf allowed: [String]) throws(TokenFailure) {
        let value = try headerString(name)
        let normalized = value.replacingOccurrences(of: " ", with: "").lowercased()
        guard allowed.contains(where: { $0.replacingOccurrences(of: " ", with: "").lowercased() == normalized }) else {
            throw TokenFailure(
                .headerParamWrongValue,
                "the header's '\(name)' is '\(value)'; it must be \(allowed.map { "'\($0)'" }.joined(separator: " or ")).")
        }
    }

    func claimString(_ name: String, required: Bool = true) throws(TokenFailure) -> String? {
        guard let value = payload[name], value != .null else {
            if required { throw TokenFailure(.claimNotFound, "the claim '\(name)' is missing.") }
            return nil
        }
        guard case .string(let text) = value, !(required && text.isEmpty) else {
            throw TokenFailure(.claimWrongType, "the claim '\(name)' must be a non-empty string.")
        }
        guard !text.contains("\u{0}") else {
            throw TokenFailure(.claimWrongType, "the claim '\(name)' must not contain NUL characters.")
        }
        return text
    }

    func claimInteger(_ name: String) throws(TokenFailure) -> Int64 {
        guard let value = payload[name] else {
            throw TokenFailure(.claimNotFound, "the claim '\(name)' is missing.")
        }
        guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e15 else {
            throw TokenFailure(.claimWrongType, "the claim '\(name)' must be an integer (Unix seconds).")
        }
        return Int64(number)
    }
}
