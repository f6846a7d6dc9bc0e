import Foundation

/// Starts programs with `posix_spawn` and reaps them with `waitpid`. Foundation's `Process` is not
/// used because its exit detection waits on a descriptor that a server the child leaves running
/// (`pg_ctl start`) inherits, so it would never see the child end.
public enum Subprocess {
    /// Starts `executable` with standard input from /dev/null and standard output and error into
    /// the file at `outputPath`, its environment this process's merged with `environment`.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], outputPath: String
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours: a child holding our listening socket or database connections
        // would keep the port busy and the connections open after we are gone.
        closeInheritedDescriptors(&actions)
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        // A child starts with every signal unblocked and at its default action, whatever the
        // spawning thread blocks (a server's threads block SIGTERM to handle it themselves; a
        // child inheriting that would ignore being asked to stop).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw SubprocessError(description: "could not start \(executable): \(String(cString: strerror(status)))")
        }
        return pid
    }

    /// The exit status of `pid` once it has ended (128 + the signal for a killed process); with
    /// `block` false, nil while it still runs.
    public static func exitStatus(of pid: pid_t, block: Bool) -> Int32? {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, block ? 0 : WNOHANG) } while result == -1 && errno == EINTR
        guard result == pid else { return nil }
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    /// Runs a command to completion and returns its exit status and output.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("layer-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let pid = try spawn(executable, arguments, environment: environment, outputPath: outputPath)
        let status = exitStatus(of: pid, block: true) ?? -1
        return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }
}

public struct SubprocessError: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) { self.description = description }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
/// module does not declare; looked up at run time, and skipped where it does not exist.
private func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
    _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
}
