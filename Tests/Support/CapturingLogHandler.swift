import Foundation
import Logging
import Synchronization

/// Keeps every log line, so a test can check what the services wrote (and what they must not).
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var text: String { lines.withLock { $0.joined(separator: "\n") } }

    public func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "captured") { label in Handler(label: label, capture: self) }
        logger.logLevel = level
        return logger
    }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    struct Handler: LogHandler {
        let label: String
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
            capture.append("\(event.level) \(label) \(event.message) \(all) \(event.source)")
        }
    }
}
