import AsyncHTTPClient
import Foundation
import LayerModels
import NIOCore

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
        try await inbox.take(timeout: timeout, for: "a server-sent event", where: predicate) {
            Self.endedError($0, while: "waiting for an event")
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
