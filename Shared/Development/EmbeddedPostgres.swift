import Crypto
import Foundation
import LayerServer
import Logging

/// A private PostgreSQL cluster started from the machine's own PostgreSQL binaries: what
/// `layer dev` and the test suite run on when no database URL is configured.
///
/// `directory` is private (0700): it holds the cluster's password. The cluster lives in
/// `<directory>/postgres`, listens on a free loopback port with that password, keeps its data
/// across restarts and is stopped cleanly by ``stop()``. PostgreSQL refuses to run as root, so as
/// root the server runs as the unprivileged `nobody` user, which cannot enter a private folder of
/// root's: then the cluster lives in `/var/lib/layerline/<hash of directory>/postgres` instead.
public final class EmbeddedPostgres: Sendable {
    public enum Failure: Error, CustomStringConvertible {
        case binariesNotFound
        case commandFailed(String, Int32, String)

        public var description: String {
            switch self {
            case .binariesNotFound:
                "PostgreSQL's initdb and pg_ctl were not found; install PostgreSQL (e.g. apt-get install postgresql) or set LAYER_DATABASE_URL."
            case .commandFailed(let command, let status, let output):
                "\(command) failed with status \(status): \(output)"
            }
        }
    }

    public let directory: URL
    public let settings: DatabaseSettings
    let binDirectory: URL
    let logger: Logger

    /// The cluster's own folder: `<directory>/postgres`, or as root one under /var/lib/layerline.
    public let dataDirectory: URL

    private init(directory: URL, dataDirectory: URL, settings: DatabaseSettings, binDirectory: URL, logger: Logger) {
        self.directory = directory
        self.dataDirectory = dataDirectory
        self.settings = settings
        self.binDirectory = binDirectory
        self.logger = logger
    }

    /// Creates the cluster if needed and starts it (or joins it if it is already running).
    public static func start(directory: URL, maxConnections: Int = 200, logger: Logger) throws -> EmbeddedPostgres {
        guard let bin = findBinaries() else { throw Failure.binariesNotFound }
        let fileManager = FileManager.default
        try Secrets.createPrivateDirectory(at: directory)
        removeOrphanedClusters(logger: logger)
        let serverDirectory = try serverDirectory(for: directory, logger: logger)
        let data = serverDirectory.appendingPathComponent("postgres")
        let passwordFile = directory.appendingPathComponent("postgres.password")
        try moveEarlierCluster(from: directory.appendingPathComponent("postgres"), to: data, logger: logger)

        // As root the cluster outlives the data directory: one whose password went with a deleted
        // data directory can never be reached again, so the new data directory starts afresh.
        if fileManager.fileExists(atPath: data.appendingPathComponent("PG_VERSION").path),
            !fileManager.fileExists(atPath: passwordFile.path)
        {
            logger.warning(
                "The data directory was deleted: its PostgreSQL cluster is made again", metadata: ["path": "\(data.path)"])
            if let pid = runningPID(data) {
                kill(pid, SIGINT)  // PostgreSQL's fast shutdown
                for _ in 0..<100 where runningPID(data) != nil { usleep(100_000) }
            }
            try fileManager.removeItem(at: data)
        }
        if !fileManager.fileExists(atPath: data.appendingPathComponent("PG_VERSION").path) {
            logger.info("Creating a private PostgreSQL cluster", metadata: ["path": "\(data.path)"])
            try? fileManager.removeItem(at: data)
            try fileManager.createDirectory(at: data, withIntermediateDirectories: true)
            let password = randomPassword()
            try Secrets.writePrivately(Data(password.utf8), to: passwordFile)
            // initdb reads the password from a file its own user can read; it is removed at once.
            let initPasswordFile = serverDirectory.appendingPathComponent("initdb.password")
            try Secrets.writePrivately(Data(password.utf8), to: initPasswordFile)
            try ownForServer(initPasswordFile)
            try ownForServer(data)
            defer { try? fileManager.removeItem(at: initPasswordFile) }
            try run(
                bin.appendingPathComponent("initdb"),
                [
                    "-D", data.path, "-U", "postgres", "--auth=scram-sha-256", "--pwfile=\(initPasswordFile.path)",
                    "--encoding=UTF8", "--locale=C",
                ])
        }
        let password = try String(contentsOf: passwordFile, encoding: .utf8)

        let port: Int
        if let running = runningPort(data) {
            port = running
        } else {
            port = try freePort()
            try ownForServer(data)
            try run(bin.appendingPathComponent("pg_ctl"), startArguments(data: data, port: port, maxConnections: maxConnections))
        }
        let settings = DatabaseSettings(
            host: "127.0.0.1", port: port, username: "postgres", password: password, database: "postgres")
        logger.info("PostgreSQL is running", metadata: ["port": "\(port)"])
        return EmbeddedPostgres(
            directory: directory, dataDirectory: data, settings: settings, binDirectory: bin, logger: logger)
    }

    /// Stops the server with a fast, clean shutdown (data is kept).
    public func stop() {
        do {
            try Self.run(binDirectory.appendingPathComponent("pg_ctl"), ["-D", dataDirectory.path, "-m", "fast", "-w", "stop"])
            logger.info("PostgreSQL stopped")
        } catch {
            logger.error("Stopping PostgreSQL failed", metadata: ["error": "\(error)"])
        }
    }

    /// pg_ctl's shutdown modes: `fast` rolls back open transactions and closes connections;
    /// `immediate` stops at once, as a crash would, and recovers from the WAL at the next start.
    public enum ShutdownMode: String, Sendable {
        case fast, immediate
    }

    /// Restarts the server on the same port and data, as an operator's `pg_ctl restart` would:
    /// for the fault tests.
    public func restart(mode: ShutdownMode) throws {
        try Self.run(
            binDirectory.appendingPathComponent("pg_ctl"),
            ["-D", dataDirectory.path, "-m", mode.rawValue, "-w", "-t", "60", "restart"])
    }

    /// Stops the server, keeping its data, until ``startAgain()``: an outage, for the fault tests.
    public func stopServer(mode: ShutdownMode) throws {
        try Self.run(
            binDirectory.appendingPathComponent("pg_ctl"), ["-D", dataDirectory.path, "-m", mode.rawValue, "-w", "stop"])
    }

    /// Starts the server stopped by ``stopServer(mode:)`` again, on its port.
    public func startAgain() throws {
        try Self.run(
            binDirectory.appendingPathComponent("pg_ctl"),
            Self.startArguments(data: dataDirectory, port: settings.port, maxConnections: 200))
    }

    static func startArguments(data: URL, port: Int, maxConnections: Int) -> [String] {
        [
            "-D", data.path, "-l", data.appendingPathComponent("server.log").path, "-w", "-t", "60",
            "-o",
            "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c max_connections=\(maxConnections) -c fsync=on",
            "start",
        ]
    }

    /// Stops the server and deletes its data directory and cluster for good (as root the cluster
    /// lives outside the data directory): for throwaway clusters of tests and benchmarks.
    public func stopAndRemove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
        try? FileManager.default.removeItem(at: Self.serverFolder(for: directory))
    }

    /// Stops the server and deletes the cluster once the process `pid` has exited: for the test
    /// suite, which has no hook that runs after its last test.
    public func stopAndRemoveAfterExit(of pid: Int32) throws {
        let serverFolder = dataDirectory.deletingLastPathComponent()
        let script = """
            while kill -0 \(pid) 2>/dev/null; do sleep 0.5; done
            '\(binDirectory.appendingPathComponent("pg_ctl").path)' -D '\(dataDirectory.path)' -m immediate -w stop >/dev/null 2>&1 || \
              runuser -u nobody -- '\(binDirectory.appendingPathComponent("pg_ctl").path)' -D '\(dataDirectory.path)' -m immediate -w stop >/dev/null 2>&1
            rm -rf '\(directory.path)' '\(dataDirectory.path)'
            [ '\(serverFolder.path)' = '\(directory.path)' ] || rmdir '\(serverFolder.path)' 2>/dev/null
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setsid")
        process.arguments = ["sh", "-c", script]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    // MARK: - Helpers

    static func findBinaries() -> URL? {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["LAYER_POSTGRES_BIN"] { candidates.append(env) }
        if let output = try? capture("/bin/sh", ["-c", "pg_config --bindir 2>/dev/null"]) {
            candidates.append(output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        candidates += versions.sorted { (Int($0) ?? 0) > (Int($1) ?? 0) }.map { "/usr/lib/postgresql/\($0)/bin" }
        return candidates.map { URL(fileURLWithPath: $0) }.first {
            FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("pg_ctl").path)
        }
    }

    static var isRoot: Bool { geteuid() == 0 }

    /// Where the cluster's files go: inside `directory`, except as root, whose private directory
    /// the server's user cannot enter; then a folder of its own under /var/lib/layerline, named
    /// after `directory` (so that the next start finds it again).
    static func serverDirectory(for directory: URL, logger: Logger) throws -> URL {
        let elsewhere = serverFolder(for: directory)
        guard elsewhere != directory else { return directory }
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: elsewhere.path)
        // Whose cluster this is, so that it goes once that data directory is gone.
        try Data(directory.standardizedFileURL.path.utf8).write(to: elsewhere.appendingPathComponent(ownerFile))
        logger.debug(
            "As root, the PostgreSQL cluster lives outside the data directory", metadata: ["cluster": "\(elsewhere.path)"])
        return elsewhere
    }

    /// The folder that holds the cluster of the data directory `directory` (in its `postgres`
    /// subfolder): `directory` itself, or as root `/var/lib/layerline/<first 16 hex digits of the
    /// SHA-256 of its path>`, which outlives `directory`: whoever deletes a data directory for good
    /// (a test) deletes this folder too.
    public static func serverFolder(for directory: URL) -> URL {
        guard isRoot else { return directory }
        let name = SHA256.hash(data: Data(directory.path.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
        return URL(fileURLWithPath: "/var/lib/layerline").appendingPathComponent(name)
    }

    /// The file of a cluster's folder under /var/lib/layerline that names its data directory.
    static let ownerFile = "data-directory"

    /// As root: stops and deletes the clusters under /var/lib/layerline whose temporary data
    /// directory is gone, which nothing could ever reach again (a benchmark or a script that ran
    /// `layer dev` on a temporary directory and deleted it, or was killed, leaves one behind,
    /// server and all). Only temporary directories: one elsewhere may be on a disk that is merely
    /// not mounted now.
    static func removeOrphanedClusters(logger: Logger) {
        guard isRoot else { return }
        let fileManager = FileManager.default
        let root = URL(fileURLWithPath: "/var/lib/layerline")
        let temporary = fileManager.temporaryDirectory.standardizedFileURL.path
        for name in (try? fileManager.contentsOfDirectory(atPath: root.path)) ?? [] {
            let folder = root.appendingPathComponent(name)
            guard let owner = try? String(contentsOf: folder.appendingPathComponent(ownerFile), encoding: .utf8),
                owner.hasPrefix(temporary + "/"), !fileManager.fileExists(atPath: owner)
            else { continue }
            let data = folder.appendingPathComponent("postgres")
            if let pid = runningPID(data) {
                kill(pid, SIGINT)  // PostgreSQL's fast shutdown
                for _ in 0..<100 where kill(pid, 0) == 0 { usleep(100_000) }
            }
            do {
                try fileManager.removeItem(at: folder)
                logger.notice(
                    "Removed the PostgreSQL cluster of a deleted data directory", metadata: ["data_directory": "\(owner)"])
            } catch {
                logger.warning("Could not remove an orphaned PostgreSQL cluster", metadata: ["folder": "\(folder.path)"])
            }
        }
    }

    /// Moves a cluster made by an earlier version, when root's data directory was open to others
    /// and the cluster lived inside it, to where the server's user can reach it now. A server
    /// still running on it is stopped first (with a signal: its user can no longer reach the
    /// folder to run pg_ctl in it).
    static func moveEarlierCluster(from earlier: URL, to data: URL, logger: Logger) throws {
        let fileManager = FileManager.default
        guard earlier.standardizedFileURL.path != data.standardizedFileURL.path,
            fileManager.fileExists(atPath: earlier.appendingPathComponent("PG_VERSION").path),
            !fileManager.fileExists(atPath: data.appendingPathComponent("PG_VERSION").path)
        else { return }
        if let pid = runningPID(earlier) {
            kill(pid, SIGINT)  // PostgreSQL's fast shutdown
            for _ in 0..<600 where kill(pid, 0) == 0 { usleep(100_000) }
        }
        try? fileManager.removeItem(at: data)
        try capture("/bin/mv", [earlier.path, data.path])
        logger.notice("Moved the PostgreSQL cluster out of the private data directory", metadata: ["cluster": "\(data.path)"])
    }

    /// As root, hands the data directory to `nobody`, the user the server runs as.
    static func ownForServer(_ url: URL) throws {
        guard isRoot else { return }
        try capture("/bin/chown", ["-R", "nobody:nogroup", url.path])
        if url.hasDirectoryPath || (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: url.path)
        }
    }

    static func run(_ executable: URL, _ arguments: [String]) throws {
        if isRoot {
            try capture("/usr/sbin/runuser", ["-u", "nobody", "--", executable.path] + arguments)
        } else {
            try capture(executable.path, arguments)
        }
    }

    @discardableResult
    static func capture(_ executable: String, _ arguments: [String]) throws -> String {
        let (status, output) = try Subprocess.run(executable, arguments, environment: ["LC_ALL": "C"])
        guard status == 0 else {
            throw Failure.commandFailed(([executable] + arguments).joined(separator: " "), status, output)
        }
        return output
    }

    /// The port of a server already running on this data directory, if any.
    static func runningPort(_ data: URL) -> Int? {
        guard runningPID(data) != nil else { return nil }
        return postmasterLines(data).flatMap { $0.count > 3 ? Int($0[3]) : nil }
    }

    /// The process id of a server running on this data directory, if any.
    public static func runningPID(_ data: URL) -> pid_t? {
        guard let lines = postmasterLines(data), lines.count > 3, let pid = Int32(lines[0]), kill(pid, 0) == 0
        else { return nil }
        return pid
    }

    private static func postmasterLines(_ data: URL) -> [Substring]? {
        guard let pidFile = try? String(contentsOf: data.appendingPathComponent("postmaster.pid"), encoding: .utf8)
        else { return nil }
        return pidFile.split(separator: "\n", omittingEmptySubsequences: false)
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw Failure.commandFailed("bind", errno, "could not find a free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func randomPassword() -> String {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<32).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
    }
}
