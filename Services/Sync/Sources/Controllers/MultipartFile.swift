import Foundation
import LayerModels
import LayerServer
import MultipartKit
import NIOCore

/// The bytes of the one file of a `multipart/form-data` body, as they arrive: what an HTML form
/// or a storage client posts to an upload URL. The body is parsed as it streams in (multipart-kit's
/// parser), the file part's bytes are handed on, and other fields are read past and dropped. The
/// file is the part whose `Content-Disposition` has a `filename` (or, failing that, is named
/// `file`).
///
/// A body that is not well-formed multipart, that has no file or two, or that ends before its
/// file does is a 400; one longer than `limit` bytes in all is a 413 (so fields and headers
/// cannot hold more than the allowance the caller gives beyond the file).
struct MultipartFile<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer

    let base: Base
    let boundary: String
    let limit: Int64

    /// The boundary of a `multipart/form-data` content type; nil for any other type.
    static func boundary(contentType: String?) -> String? {
        guard let contentType else { return nil }
        let fields = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard fields.first?.lowercased() == "multipart/form-data" else { return nil }
        for field in fields.dropFirst() {
            let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            // RFC 2046: 1 to 70 characters.
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), boundary: boundary, limit: limit)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let parser: MultipartParser
        let parts: Parts
        let limit: Int64
        var read: Int64 = 0

        init(base: Base.AsyncIterator, boundary: String, limit: Int64) {
            self.base = base
            self.limit = limit
            parser = MultipartParser(boundary: boundary)
            let parts = Parts()
            self.parts = parts
            parser.onHeader = { name, value in parts.header(name, value) }
            parser.onBody = { buffer in parts.body(buffer) }
            parser.onPartComplete = { parts.complete() }
        }

        mutating func next() async throws -> ByteBuffer? {
            while true {
                if !parts.pending.isEmpty { return parts.pending.removeFirst() }
                if let error = parts.error { throw error }
                guard let buffer = try await base.next() else {
                    guard parts.fileDone else {
                        throw Self.malformed(
                            parts.fileStarted ? "The body ended before its file did." : "The form has no file field.")
                    }
                    return nil
                }
                read += Int64(buffer.readableBytes)
                guard read <= limit else {
                    throw APIError(.requestTooLarge, "The form is larger than its file and \(limit) bytes allow.")
                }
                do {
                    try parser.execute(buffer)
                } catch {
                    throw Self.malformed("The body is not well-formed multipart/form-data.")
                }
            }
        }

        static func malformed(_ message: String) -> APIError {
            APIError(.invalidRequest, message, data: ["header": "Content-Type"])
        }
    }

    /// What the parser found so far: the headers of the current part, and the file's bytes not
    /// yet handed on.
    final class Parts {
        var headers: [(name: String, value: String)] = []
        /// Whether the current part is the file; decided by its headers at its first bytes.
        var current: Bool?
        var pending: [ByteBuffer] = []
        var fileStarted = false
        var fileDone = false
        var error: APIError?

        func header(_ name: String, _ value: String) { headers.append((name, value)) }

        func body(_ buffer: ByteBuffer) {
            if current == nil { current = startPart() }
            if current == true, buffer.readableBytes > 0 { pending.append(buffer) }
        }

        func complete() {
            if current == nil { current = startPart() }
            if current == true { fileDone = true }
            headers = []
            current = nil
        }

        /// Whether the part whose headers were just read is the file; a second file is an error.
        private func startPart() -> Bool {
            let disposition = headers.last { $0.name.lowercased() == "content-disposition" }?.value ?? ""
            let parameters = disposition.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            let isFile = parameters.contains { $0.hasPrefix("filename") } || parameters.contains("name=\"file\"")
            guard isFile else { return false }
            guard !fileStarted else {
                error = MultipartFile.Iterator.malformed("The form has more than one file; send one.")
                return false
            }
            fileStarted = true
            return true
        }
    }
}
