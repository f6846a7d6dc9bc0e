import Foundation
import LayerModels
import LayerServer

/// Reads and checks what the parties send: a bad field is 422 naming it, and nothing changes.
enum CallInput {
    /// A device sends a handful of candidates; more is a client bug or abuse (and both parties'
    /// lists must fit in one push signal).
    static let maxCandidates = 16
    /// Tokens travel in STUN NONCE attributes (RFC 8489 allows 763 bytes; far less is plenty).
    static let maxTokenBytes = 256

    /// `POST /calls`.
    struct Placement: Sendable {
        var callee: String
        var callerToken: String
        var candidates: [Candidate]
        var media: String
    }

    /// `POST /calls/<id>/answer`.
    struct Answer: Sendable {
        var deviceID: String
        var calleeToken: String
        var candidates: [Candidate]
    }

    static func placement(_ body: JSONValue) throws -> Placement {
        let fields = try object(body, allowed: ["callee", "caller_token", "candidates", "media"])
        guard case .string(let callee)? = fields["callee"] else {
            throw APIError.invalid("callee", "callee is the identity called (layer:///identities/<user>).")
        }
        var media = "audio"
        switch fields["media"] {
        case nil, .null?: break
        case .string(let value)? where value == "audio" || value == "video": media = value
        default: throw APIError.invalid("media", "media is audio or video.")
        }
        return Placement(
            callee: try IdentityReference.userID(callee, property: "callee"),
            callerToken: try token(fields["caller_token"], property: "caller_token"),
            candidates: try candidates(fields["candidates"]), media: media)
    }

    static func answer(_ body: JSONValue) throws -> Answer {
        let fields = try object(body, allowed: ["device_id", "callee_token", "candidates"])
        guard case .string(let device)? = fields["device_id"], (1...128).contains(device.count),
            !device.contains("\u{0}")
        else {
            throw APIError.invalid("device_id", "device_id names the answering device (1 to 128 characters).")
        }
        return Answer(
            deviceID: device, calleeToken: try token(fields["callee_token"], property: "callee_token"),
            candidates: try candidates(fields["candidates"]))
    }

    /// The body of an action without fields (reject, cancel, hang up): empty, `{}`, or no body.
    static func empty(_ body: JSONValue?) throws {
        guard let body, body != .null else { return }
        _ = try object(body, allowed: [])
    }

    private static func object(_ body: JSONValue, allowed: Set<String>) throws -> [String: JSONValue] {
        guard case .object(let fields) = body else { throw APIError.invalid("body", "The body is a JSON object.") }
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw APIError.invalid(unknown, "'\(unknown)' is not a field of this request.")
        }
        return fields
    }

    private static func token(_ value: JSONValue?, property: String) throws -> String {
        guard case .string(let token)? = value, (1...maxTokenBytes).contains(token.utf8.count),
            token.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) })
        else {
            throw APIError.invalid(
                property, "\(property) is 1 to \(maxTokenBytes) visible ASCII characters (it travels as a STUN NONCE).")
        }
        return token
    }

    static func candidates(_ value: JSONValue?) throws -> [Candidate] {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value else { throw APIError.invalid("candidates", "candidates is a list.") }
        guard items.count <= maxCandidates else {
            throw APIError.invalid("candidates", "candidates holds at most \(maxCandidates) candidates.")
        }
        return try items.enumerated().map { index, item in
            let property = "candidates.\(index)"
            guard case .object(let fields) = item else {
                throw APIError.invalid(property, "A candidate is an object with type, ip, port and transport.")
            }
            if let unknown = fields.keys.sorted().first(where: { !["type", "ip", "port", "transport"].contains($0) }) {
                throw APIError.invalid("\(property).\(unknown)", "'\(unknown)' is not a field of a candidate.")
            }
            guard case .string(let type)? = fields["type"], ["host", "srflx", "relay"].contains(type) else {
                throw APIError.invalid("\(property).type", "type is host, srflx or relay.")
            }
            guard case .string(let ip)? = fields["ip"], isIPAddress(ip) else {
                throw APIError.invalid("\(property).ip", "ip is an IPv4 or IPv6 address.")
            }
            guard case .number(let number)? = fields["port"], number == number.rounded(), (1...65535).contains(number) else {
                throw APIError.invalid("\(property).port", "port is a whole number from 1 to 65535.")
            }
            var transport = "udp"
            switch fields["transport"] {
            case nil, .null?: break
            case .string(let value)? where value == "udp" || value == "tcp": transport = value
            default: throw APIError.invalid("\(property).transport", "transport is udp or tcp.")
            }
            return Candidate(type: type, ip: ip, port: Int(number), transport: transport)
        }
    }

    /// Whether `text` is an IPv4 address in dotted decimal or an IPv6 address.
    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
