import Foundation
import HTTPTypes
import HummingbirdWSClient
import LayerModels
import Logging
import NIOCore
import NIOSSL
import NIOWebSocket
import Synchronization

/// A WebSocket client for a server speaking JSON text packets. Inbound packets are buffered in
/// arrival order; a text packet that is not JSON is buffered as `.string(rawText)`.
public final class TestWebSocket: Sendable {
    private let writer: WebSocketOutboundWriter
    private let inbox: PushInbox<JSONValue>
    private let task: Task<Void, Never>
    private let requestCounter = Mutex(0)

    private init(writer: WebSocketOutboundWriter, inbox: PushInbox<JSONValue>, task: Task<Void, Never>) {
        self.writer = writer
        self.inbox = inbox
        self.task = task
    }

    deinit { task.cancel() }

    /// Opens the socket; returns once the upgrade succeeded, throws if it failed or was refused.
    public static func connect(
        url: String, subprotocol: String? = "layer-3.0", headers: [String: String] = [:],
        tls: TLSConfiguration? = nil, logger: Logger = Logger(label: "test-ws")
    ) async throws -> TestWebSocket {
        var fields = HTTPFields()
        if let subprotocol { fields[.secWebSocketProtocol] = subprotocol }
        for (name, value) in headers {
            guard let fieldName = HTTPField.Name(name) else { throw PushClientError(description: "Bad header \(name)") }
            fields[fieldName] = value
        }
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 1 << 20, additionalHeaders: fields, closeTimeout: .seconds(1), autoPing: .disabled)
        let inbox = PushInbox<JSONValue>()
        // The handler hands its writer out through this stream; the stream ends if `run` ends first.
        let (started, startedContinuation) = AsyncThrowingStream.makeStream(of: WebSocketOutboundWriter.self)
        let task = Task {
            let client = WebSocketClient(url: url, configuration: configuration, tlsConfiguration: tls, logger: logger) {
                inbound, outbound, _ in
                startedContinuation.yield(outbound)
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message else { continue }
                    let packet = (try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))) ?? .string(text)
                    inbox.update {
                        $0.items.append(packet)
                        $0.received += 1
                    }
                }
            }
            do {
                let frame = try await client.run()
                inbox.update {
                    $0.closeFrame = frame
                    $0.ended = true
                }
                startedContinuation.finish()
            } catch {
                inbox.update {
                    $0.endError = error
                    $0.ended = true
                }
                startedContinuation.finish(throwing: error)
            }
        }
        do {
            var iterator = started.makeAsyncIterator()
            guard let writer = try await iterator.next() else {
                throw PushClientError(description: "WebSocket \(url) ended before the upgrade")
            }
            return TestWebSocket(writer: writer, inbox: inbox, task: task)
        } catch {
            task.cancel()
            throw error
        }
    }

    /// How many packets arrived so far (taken or not).
    public var received: Int { inbox.read { $0.received } }

    public func send(_ packet: JSONValue) async throws {
        let data = try JSONEncoder().encode(packet)
        try await sendText(String(decoding: data, as: UTF8.self))
    }

    /// Sends raw text, e.g. a malformed packet.
    public func sendText(_ text: String) async throws {
        try await writer.writeTextMessage(text)
    }

    public func sendBinary(_ bytes: [UInt8]) async throws {
        try await writer.writeBinaryMessage(ByteBuffer(bytes: bytes))
    }

    /// The next packet in arrival order.
    public func next(timeout: Duration = .seconds(10)) async throws -> JSONValue {
        try await next(timeout: timeout, where: { _ in true })
    }

    /// The next packet matching `predicate`; packets before it are dropped.
    public func next(timeout: Duration = .seconds(10), where predicate: (JSONValue) -> Bool) async throws -> JSONValue {
        try await inbox.take(timeout: timeout, for: "a WebSocket packet", where: predicate) {
            Self.closedError($0, while: "waiting for a packet")
        }
    }

    /// Sends a request packet and returns the `body` of its response. Other packets that arrive
    /// meanwhile stay buffered for `next`.
    public func request(
        _ method: String, objectID: String? = nil, data: JSONValue? = nil, timeout: Duration = .seconds(10)
    ) async throws -> JSONValue {
        let number = requestCounter.withLock { counter in
            counter += 1
            return counter
        }
        let id = "r\(number)"
        var body: [String: JSONValue] = ["request_id": .string(id), "method": .string(method)]
        if let objectID { body["object_id"] = .string(objectID) }
        if let data { body["data"] = data }
        try await send(["type": "request", "body": .object(body)])
        return try await inbox.wait(timeout: timeout, for: "the response to \(method) request \(id)") { s in
            let index = s.items.firstIndex {
                $0["type"]?.stringValue == "response" && $0["body"]?["request_id"]?.stringValue == id
            }
            if let index { return s.items.remove(at: index)["body"] ?? .null }
            if s.ended { throw Self.closedError(s, while: "waiting for the response to \(method) request \(id)") }
            return nil
        }
    }

    /// Waits until the server closes the socket. `code` is nil if it dropped without a close frame.
    public func closed(timeout: Duration = .seconds(10)) async throws -> (code: Int?, reason: String?) {
        let frame = try await inbox.wait(timeout: timeout, for: "the server to close the WebSocket") { s in
            s.ended ? Optional(s.closeFrame) : nil
        }
        guard let frame else { return (nil, nil) }
        return (Int(UInt16(webSocketErrorCode: frame.closeCode)), frame.reason)
    }

    /// Closes with normalClosure and waits for the background task (cancelling it after 5 s).
    public func close() async {
        try? await writer.close(.normalClosure, reason: nil)
        let ended = try? await inbox.wait(timeout: .seconds(5), for: "the WebSocket close") { $0.ended ? true : nil }
        if ended == nil { task.cancel() }
        await task.value
    }

    private static func closedError(_ s: PushInbox<JSONValue>.State, while awaited: String) -> PushClientError {
        if let frame = s.closeFrame {
            let code = UInt16(webSocketErrorCode: frame.closeCode)
            return PushClientError(description: "WebSocket closed (\(code) \(frame.reason ?? "")) \(awaited)")
        }
        return PushClientError(description: "WebSocket dropped (\(s.endError.map { "\($0)" } ?? "no close frame")) \(awaited)")
    }
}
