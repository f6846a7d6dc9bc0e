import Foundation
import LayerServer

/// A program the tests start and stop themselves (the `layer` binary), with its output in a file.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let outputPath: String

    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).log").path
        pid = try Subprocess.spawn(executable, arguments, environment: environment, outputPath: outputPath)
    }

    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the process to end; its exit status, or nil if it was still running at the deadline.
    public func wait(timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = Subprocess.exitStatus(of: pid, block: false) { return status }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Runs a command to completion and returns its output.
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (
        status: Int32, output: String
    ) {
        let child = try ChildProcess(executable, arguments)
        guard let status = try await child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            throw FixtureError("\(executable) \(arguments) did not finish: \(child.output)")
        }
        return (status, child.output)
    }

    /// A binary built next to the test bundle, such as `layer`.
    public static func builtProduct(_ name: String) throws -> String {
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw FixtureError("\(path) is not built; run `swift build` first")
        }
        return path
    }
}
