import AsyncHTTPClient
import Foundation
import HTTPTypes
import HummingbirdWSClient
import LayerModels
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// Thrown when a push client waited longer than its timeout.
public struct PushTimeout: Error, CustomStringConvertible {
    public let awaited: String
    public let timeout: Duration
    public var description: String { "Timed out after \(timeout) waiting for \(awaited)" }
}

/// Thrown when a push stream ended (or could not be used) while something was still awaited.
public struct PushClientError: Error, CustomStringConvertible {
    public let description: String
}

/// Buffered inbound items plus the waiters for them. Every change bumps `version` and wakes all
/// waiters, which re-check their condition, so a reader can take any item, not only the first.
private final class PushInbox<Element: Sendable>: Sendable {
    struct State: Sendable {
        var items: [Element] = []
        var received = 0
        var comments = 0
        var ended = false
        var closeFrame: WebSocketCloseFrame?
        var endError: (any Error)?
        var version = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func read<T: Sendable>(_ body: (State) -> T) -> T { state.withLock { body($0) } }

    func update(_ body: (inout State) -> Void) {
        let waiters = state.withLock { s in
            body(&s)
            s.version += 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `check` under the lock now and after every change until it returns a value (or throws).
    func wait<T: Sendable>(
        timeout: Duration, for awaited: String, _ check: (inout State) throws -> T?
    ) async throws -> T {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (value, version) = try state.withLock { s throws -> (T?, Int) in (try check(&s), s.version) }
            if let value { return value }
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline else { throw PushTimeout(awaited: awaited, timeout: timeout) }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.suspend(after: version) }
                group.addTask { try? await Task.sleep(until: deadline, clock: .continuous) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Suspends until the state changes after `version` or the task is cancelled.
    private func suspend(after version: Int) async {
        let id = state.withLock { s in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checking cancellation under the lock closes the race with `onCancel`.
                let resumeNow = state.withLock { s in
                    if s.version != version || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

// MARK: - WebSocket

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
        logger: Logger = Logger(label: "test-ws")
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
            let client = WebSocketClient(url: url, configuration: configuration, logger: logger) { inbound, outbound, _ in
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
        try await inbox.wait(timeout: timeout, for: "a WebSocket packet") { s in
            while !s.items.isEmpty {
                let packet = s.items.removeFirst()
                if predicate(packet) { return packet }
            }
            if s.ended { throw Self.closedError(s, while: "waiting for a packet") }
            return nil
        }
    }

    /// Sends a request packet and returns the `body` of its response. Other packets that arrive
    /// meanwhile stay buffered for `next`.
    public func request(
        _ method: String, objectID: String? = nil, data: JSONValue? = nil, timeout: Duration = .seconds(10)
    ) async throws -> JSONValue {
        let id = "r\(requestCounter.withLock { $0 += 1; return $0 })"
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

// MARK: - Server-sent events

public struct SSEEvent: Sendable {
    /// The last event ID seen so far on the stream (it persists across events, per the spec).
    public var id: String?
    public var event: String?
    public var data: String
    public var json: JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(data.utf8)) }

    public init(id: String? = nil, event: String? = nil, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// A `text/event-stream` parser per the HTML spec, fed with chunks split anywhere.
private struct SSEParser {
    private var line: [UInt8] = []
    private var afterCR = false
    private var firstLine = true
    private var data = ""
    private var eventType = ""
    private var lastID: String?

    mutating func feed(_ bytes: ByteBufferView, events: inout [SSEEvent], comments: inout Int) {
        for byte in bytes {
            // A LF right after a CR (possibly in the next chunk) ends the same line.
            if afterCR, byte == UInt8(ascii: "\n") {
                afterCR = false
                continue
            }
            afterCR = byte == UInt8(ascii: "\r")
            guard afterCR || byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if firstLine, line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
            firstLine = false
            process(String(decoding: line, as: UTF8.self), events: &events, comments: &comments)
            line.removeAll(keepingCapacity: true)
        }
    }

    private mutating func process(_ line: String, events: inout [SSEEvent], comments: inout Int) {
        if line.isEmpty {
            defer { (data, eventType) = ("", "") }
            guard !data.isEmpty else { return }
            events.append(SSEEvent(id: lastID, event: eventType.isEmpty ? nil : eventType, data: String(data.dropLast())))
            return
        }
        if line.hasPrefix(":") {
            comments += 1
            return
        }
        var field = line[...]
        var value: Substring = ""
        if let colon = line.firstIndex(of: ":") {
            field = line[..<colon]
            value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
        }
        switch field {
        case "event": eventType = String(value)
        case "data": data += value + "\n"
        case "id" where !value.contains("\0"): lastID = value.isEmpty ? nil : String(value)
        default: break  // "retry" and unknown fields are ignored
        }
    }
}

/// A client of a server-sent event stream. Events and keep-alive comments are read in the background.
public final class TestEventStream: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public var contentType: String? { headers.first { $0.0.lowercased() == "content-type" }?.1 }
    private let inbox = PushInbox<SSEEvent>()
    private let reader: Task<Void, Never>?
    /// The unread body of a non-200 response.
    private let errorBody: HTTPClientResponse.Body?

    private init(response: HTTPClientResponse) {
        status = Int(response.status.code)
        headers = response.headers.map { ($0.name, $0.value) }
        guard response.status == .ok else {
            errorBody = response.body
            reader = nil
            return
        }
        errorBody = nil
        reader = Task { [inbox] in
            var parser = SSEParser()
            do {
                for try await chunk in response.body {
                    var events: [SSEEvent] = []
                    var comments = 0
                    parser.feed(chunk.readableBytesView, events: &events, comments: &comments)
                    guard !events.isEmpty || comments > 0 else { continue }
                    inbox.update {
                        $0.items += events
                        $0.received += events.count
                        $0.comments += comments
                    }
                }
                inbox.update { $0.ended = true }
            } catch {
                inbox.update {
                    $0.endError = error
                    $0.ended = true
                }
            }
        }
    }

    deinit { reader?.cancel() }

    /// Returns once the response head arrived, whatever its status.
    public static func connect(
        url: String, headers: [String: String] = [:], http: HTTPClient = .shared
    ) async throws -> TestEventStream {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "text/event-stream")
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        // The deadline only covers the head: the body is streamed until `close`.
        return TestEventStream(response: try await http.execute(request, timeout: .minutes(10)))
    }

    /// The JSON body of a non-200 response.
    public func body() async throws -> JSONValue {
        guard let errorBody else { throw PushClientError(description: "The event stream answered 200; read events") }
        let buffer = try await errorBody.collect(upTo: 1 << 20)
        return try JSONDecoder().decode(JSONValue.self, from: Data(buffer.readableBytesView))
    }

    /// Keep-alive comment lines seen so far.
    public var commentCount: Int { inbox.read { $0.comments } }

    public func next(timeout: Duration = .seconds(10)) async throws -> SSEEvent {
        try await next(timeout: timeout, where: { _ in true })
    }

    /// The next event matching `predicate`; events before it are dropped.
    public func next(timeout: Duration = .seconds(10), where predicate: (SSEEvent) -> Bool) async throws -> SSEEvent {
        try await inbox.wait(timeout: timeout, for: "a server-sent event") { s in
            while !s.items.isEmpty {
                let event = s.items.removeFirst()
                if predicate(event) { return event }
            }
            if s.ended { throw Self.endedError(s, while: "waiting for an event") }
            return nil
        }
    }

    /// Returns when at least one more comment line arrived than had when called.
    public func waitForComment(timeout: Duration = .seconds(10)) async throws {
        let seen = commentCount
        try await inbox.wait(timeout: timeout, for: "a keep-alive comment") { s in
            if s.comments > seen { return () }
            if s.ended { throw Self.endedError(s, while: "waiting for a comment") }
            return nil
        }
    }

    /// True if the stream ended (by the server, or by `close`) within `timeout`.
    public func ended(timeout: Duration = .seconds(10)) async throws -> Bool {
        do {
            return try await inbox.wait(timeout: timeout, for: "the event stream to end") { $0.ended ? true : nil }
        } catch is PushTimeout {
            return false
        }
    }

    /// Stops reading; cancelling the body iteration aborts the request.
    public func close() {
        reader?.cancel()
    }

    private static func endedError(_ s: PushInbox<SSEEvent>.State, while awaited: String) -> PushClientError {
        PushClientError(description: "Event stream ended (\(s.endError.map { "\($0)" } ?? "by the server")) \(awaited)")
    }
}
