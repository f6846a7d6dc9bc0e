import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOSSL

/// Finds the client certificate of a request, for certificate-bound sessions: the one presented
/// over mutual TLS to this server, or the one an edge proxy verified and forwarded in its header
/// (`X-Client-Certificate` unless configured otherwise; honoured only from a trusted proxy).
public struct ClientCertificateReader: Sendable {
    public let tlsEnabled: Bool
    public let trustedProxies: TrustedProxies
    let header: HTTPField.Name

    public init(tlsEnabled: Bool, trustedProxies: TrustedProxies, header: HTTPField.Name = .clientCertificate) {
        self.tlsEnabled = tlsEnabled
        self.trustedProxies = trustedProxies
        self.header = header
    }

    /// The certificate's DER bytes, if the request presented one in a way we trust.
    public func certificateDER(request: Request, context: LayerRequestContext) async -> [UInt8]? {
        if tlsEnabled, let certificate = try? await context.channel.nioSSL_peerCertificate().get() {
            return try? certificate.toDERBytes()
        }
        guard let forwarded = request.headers[header], let ip = context.remoteIP,
            trustedProxies.contains(ip)
        else { return nil }
        let pem = forwarded.removingPercentEncoding ?? forwarded
        return try? NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem).toDERBytes()
    }

    /// The RFC 8705 `x5t#S256` thumbprint of the request's certificate.
    public func thumbprint(request: Request, context: LayerRequestContext) async -> String? {
        guard let der = await certificateDER(request: request, context: context) else { return nil }
        return Self.thumbprint(der: der)
    }

    public static func thumbprint(der: [UInt8]) -> String {
        Data(SHA256.hash(data: der)).base64URLEncodedString()
    }
}

extension Data {
    /// Base64url without padding (RFC 4648 section 5), as JOSE uses it.
    public func base64URLEncodedString() -> String {
        base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url with or without padding; nil on any other character.
    public init?(base64URLEncoded text: some StringProtocol) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") || text.hasSuffix("=") else { return nil }
        base64 = base64.replacingOccurrences(of: "=", with: "")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
