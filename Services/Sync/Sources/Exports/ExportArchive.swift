import CompressNIO
import Crypto
import Foundation
import LayerServer
import NIOCore
import _CryptoExtras

/// An export archive as it is written: JSON lines, gzip-compressed, encrypted with AES-256-CBC
/// (PKCS#7 padding) under a fresh random key and IV, and handed out in pieces of
/// ``ExportRepository/chunkSize`` bytes as they fill, so that memory stays bounded whatever the
/// size of the app. The bytes are exactly what `gzip` then `openssl enc -aes-256-cbc` of the
/// whole file would give. The key goes to the customer wrapped with their RSA public key
/// (RSA-OAEP with SHA-1 and MGF1-SHA-1, what `openssl pkeyutl -pkeyopt rsa_padding_mode:oaep`
/// and `openssl rsautl -oaep` undo).
final class ExportArchiveWriter {
    let key = SymmetricKey(size: .bits256)
    let iv = AES._CBC.IV()
    private var cipher: CBCStream
    private let compressor: any NIOCompressor
    private var lines = ByteBuffer()
    private var sealed: [UInt8] = []
    private let store: (ByteBuffer) async throws -> Void
    private(set) var size: Int64 = 0
    private(set) var eventCount: Int64 = 0

    /// `store` keeps each full piece of the archive, in order, and the last one at ``finish()``.
    init(store: @escaping (ByteBuffer) async throws -> Void) throws {
        self.store = store
        cipher = CBCStream(key: key, iv: iv)
        compressor = CompressionAlgorithm.gzip().compressor
        compressor.window = ByteBufferAllocator().buffer(capacity: 64 * 1024)
        try compressor.startStream()
    }

    func append(_ line: some Encodable) async throws {
        lines.writeBytes(try StreamingJSONEncoder.encode(line))
        lines.writeInteger(UInt8(ascii: "\n"))
        eventCount += 1
        if lines.readableBytes >= 64 * 1024 { try await compress(finishing: false) }
    }

    /// Writes out the rest; the archive is complete once this returns.
    func finish() async throws {
        try await compress(finishing: true)
        try compressor.finishStream()
        sealed += try cipher.finish()
        try await storeSealed(all: true)
    }

    /// The AES key, wrapped for the holder of the private key of `publicKeyPEM`, in base64.
    func wrappedKey(for publicKeyPEM: String) throws -> String {
        let publicKey = try _RSA.Encryption.PublicKey(pemRepresentation: publicKeyPEM)
        let raw = key.withUnsafeBytes { Data($0) }
        return try publicKey.encrypt(raw, padding: .PKCS1_OAEP).base64EncodedString()
    }

    var ivBase64: String { Data(iv).base64EncodedString() }

    private func compress(finishing: Bool) async throws {
        try await lines.compressStream(with: compressor, flush: finishing ? .finish : .no) { compressed in
            try await self.encrypt(compressed)
        }
        lines.clear()
    }

    private func encrypt(_ bytes: ByteBuffer) async throws {
        sealed += try cipher.update(bytes.readableBytesView)
        try await storeSealed(all: false)
    }

    private func storeSealed(all: Bool) async throws {
        let piece = ExportRepository.chunkSize
        while sealed.count >= piece || (all && !sealed.isEmpty) {
            let count = min(piece, sealed.count)
            try await store(ByteBuffer(bytes: sealed[0..<count]))
            size += Int64(count)
            sealed.removeFirst(count)
        }
    }
}

/// AES-256-CBC over a stream: whole blocks are encrypted as they arrive, each run chained to the
/// last ciphertext block, and the rest is padded (PKCS#7) at the end. The result is that of one
/// encryption of everything.
struct CBCStream {
    let key: SymmetricKey
    private var iv: AES._CBC.IV
    private var pending: [UInt8] = []

    init(key: SymmetricKey, iv: AES._CBC.IV) {
        self.key = key
        self.iv = iv
    }

    mutating func update(_ bytes: some Collection<UInt8>) throws -> [UInt8] {
        pending += bytes
        let whole = pending.count / 16 * 16
        guard whole > 0 else { return [] }
        let out = try AES._CBC.encrypt(pending[0..<whole], using: key, iv: iv, noPadding: true)
        pending.removeFirst(whole)
        iv = try AES._CBC.IV(ivBytes: out.suffix(16))
        return Array(out)
    }

    mutating func finish() throws -> [UInt8] {
        defer { pending = [] }
        return Array(try AES._CBC.encrypt(pending, using: key, iv: iv))
    }
}
