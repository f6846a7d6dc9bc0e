import Foundation

/// A program the tests start and stop themselves (the `layer` binary), with its output in a file.
/// `posix_spawn` and `waitpid` rather than Foundation's `Process`, whose exit detection waits on a
/// descriptor that the PostgreSQL server a child leaves running would inherit.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    public let outputPath: String

    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString).log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard status == 0 else { throw FixtureError("could not start \(executable): \(status)") }
        self.pid = pid
    }

    public var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    public func signal(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the process to end; its exit status, or nil if it was still running at the deadline.
    public func wait(timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Runs a command to completion and returns its output.
    public static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (status: Int32, output: String) {
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
