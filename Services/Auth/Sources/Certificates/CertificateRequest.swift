import Foundation
import LayerModels
import LayerServer
import X509
import _CryptoExtras

/// What a device asks to be certified: its public key (whose possession it proved by signing the
/// request) and a device id.
struct CertificateRequest: Sendable {
    var publicKey: Certificate.PublicKey
    var deviceID: String
    var userAgent: String?

    /// Reads either form the API accepts: a PEM PKCS#10 request, or a Layer CSR (a compact JWS
    /// with `cty` `layer-csr;v=1`, signed with the key it carries in `pky`).
    init(_ text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("-----BEGIN") {
            try self.init(pkcs10: trimmed)
        } else {
            try self.init(layerCSR: trimmed)
        }
        guard (1...128).contains(deviceID.count), !deviceID.contains("\u{0}") else {
            throw APIError.invalid("csr", "The device id must have 1 to 128 characters.")
        }
    }

    private init(pkcs10 pem: String) throws {
        let request: CertificateSigningRequest
        do {
            request = try CertificateSigningRequest(pemEncoded: pem)
        } catch {
            throw APIError.invalid("csr", "The csr is not a readable PKCS#10 certificate request.")
        }
        guard request.publicKey.isValidSignature(request.signature, for: request) else {
            throw APIError.invalid("csr", "The csr's signature does not match its public key.")
        }
        let commonName = request.subject.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName }
        publicKey = request.publicKey
        deviceID = commonName.map { String(describing: $0.value) } ?? UUID().uuidString.lowercased()
        userAgent = nil
    }

    private init(layerCSR token: String) throws {
        do {
            let jws = try CompactJWS(token)
            try jws.requireHeader("typ", oneOf: ["JWS", "JWT"])
            try jws.requireHeader("alg", oneOf: ["RS256"])
            try jws.requireHeader("cty", oneOf: ["layer-csr;v=1"])
            let algorithm = try jws.claimString("pka")!
            guard algorithm.uppercased() == "RSA" else {
                throw TokenFailure(.claimWrongType, "the claim 'pka' must be 'RSA'.")
            }
            let keyText = try jws.claimString("pky")!
            guard let keyBytes = Data(base64Encoded: keyText) ?? Data(base64URLEncoded: keyText),
                let key = try? _RSA.Signing.PublicKey(derRepresentation: keyBytes)
            else {
                throw TokenFailure(.keyMalformed, "the claim 'pky' is not a base64 RSA public key of 2048 bits or more.")
            }
            let signature = _RSA.Signing.RSASignature(rawRepresentation: jws.signature)
            guard key.isValidSignature(signature, for: jws.signingInput, padding: .insecurePKCS1v1_5) else {
                throw TokenFailure(.signatureVerificationFailed, "the signature does not match the key in 'pky'.")
            }
            publicKey = Certificate.PublicKey(key)
            deviceID = try jws.claimString("prn")!
            userAgent = try jws.claimString("uat", required: false)
        } catch let failure as TokenFailure {
            throw failure.apiError(property: "csr")
        }
    }
}
