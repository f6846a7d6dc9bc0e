import Foundation
import LayerDevelopment
import LayerServer
import Logging
import ServiceLifecycle

/// The TURN server `layer dev` runs beside the suite when coturn is installed, as it runs
/// PostgreSQL, so that the `turn:` URIs of `GET /turn-credentials` work (DESIGN 7). coturn checks
/// the credentials the VoIP service signs (`use-auth-secret`) with the secret `layer dev` keeps;
/// it reads the secret from a private file, never from its command line, where any local user
/// could see it (`ps`). It listens on a free port of the host the suite listens on, relays on
/// the hundred ports after it and, on loopback, may relay to loopback peers (a developer's two
/// clients on one machine). As root it drops to `nobody` once it has read its file and bound its
/// ports. It stops with the suite; one left running by a `layer dev` that was killed is stopped
/// at the next start.
struct DevTURNServer: Service {
    let executable: String
    let arguments: [String]
    /// `<data dir>/coturn`: its settings file (with the secret), pid file and log.
    let folder: URL
    /// What `GET /turn-credentials` hands out for it.
    let uris: [String]
    let port: Int
    let logger: Logger

    var settingsFile: URL { folder.appendingPathComponent("turnserver.conf") }
    var pidFile: URL { folder.appendingPathComponent("turnserver.pid") }
    var logFile: URL { folder.appendingPathComponent("turnserver.log") }

    /// The server for the data directory `directory` and the suite's `host`, with `secret`; nil
    /// when coturn's `turnserver` is not installed.
    static func prepare(directory: URL, host: String, secret: String, logger: Logger) throws -> DevTURNServer? {
        guard let executable = findExecutable() else {
            logger.notice("coturn's turnserver is not installed: no TURN server (scripts/ensure-deps.sh installs it)")
            return nil
        }
        let folder = directory.appendingPathComponent("coturn")
        try Secrets.createPrivateDirectory(at: folder)
        try Secrets.writePrivately(
            Data("static-auth-secret=\(secret)\n".utf8), to: folder.appendingPathComponent("turnserver.conf"))
        let ip = host == "localhost" ? "127.0.0.1" : host
        let wildcard = ip == "0.0.0.0" || ip == "::"
        let loopback = ip == "127.0.0.1" || ip == "::1"
        let port = try freePort()
        var arguments = [
            "-c", folder.appendingPathComponent("turnserver.conf").path, "--use-auth-secret", "--realm=layerline",
            "--listening-port=\(port)", "--min-port=\(port + 1)", "--max-port=\(min(65535, port + 100))",
            "--fingerprint", "--no-cli", "--no-tls", "--no-dtls", "--no-multicast-peers", "--log-file=stdout",
            "--simple-log", "--pidfile=\(folder.appendingPathComponent("turnserver.pid").path)",
            "--db=\(try databaseFolder(directory: directory).appendingPathComponent("turndb").path)",
        ]
        if !wildcard { arguments += ["--listening-ip=\(ip)", "--relay-ip=\(ip)"] }
        if loopback { arguments.append("--allow-loopback-peers") }
        if geteuid() == 0 { arguments += ["--proc-user=nobody", "--proc-group=nogroup"] }
        let uriHost = wildcard ? "127.0.0.1" : ip.contains(":") ? "[\(ip)]" : ip
        return DevTURNServer(
            executable: executable, arguments: arguments, folder: folder,
            uris: ["udp", "tcp"].map { "turn:\(uriHost):\(port)?transport=\($0)" }, port: port, logger: logger)
    }

    func run() async throws {
        stopEarlierServer()
        let pid = try Subprocess.spawn(executable, arguments, outputPath: logFile.path)
        logger.info("TURN server (coturn) is running", metadata: ["port": "\(port)", "log": "\(logFile.path)"])
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if let status = Subprocess.exitStatus(of: pid, block: false) {
                logger.error(
                    "The TURN server stopped; calls get no relay", metadata: ["status": "\(status)", "log": "\(logFile.path)"])
                try? await gracefulShutdown()
                return
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
        Self.stop(pid)
        logger.info("TURN server stopped")
    }

    /// Asks `pid` to stop (SIGTERM), and kills it if it has not within five seconds.
    static func stop(_ pid: pid_t) {
        kill(pid, SIGTERM)
        for _ in 0..<50 {
            if Subprocess.exitStatus(of: pid, block: false) != nil || kill(pid, 0) != 0 { return }
            usleep(100_000)
        }
        kill(pid, SIGKILL)
        _ = Subprocess.exitStatus(of: pid, block: false)
    }

    /// Stops a server of this data directory that a `layer dev` killed without a shutdown left
    /// running: the process of the pid file, if it runs with this settings file.
    func stopEarlierServer() {
        guard let text = try? String(contentsOf: pidFile, encoding: .utf8),
            let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)), pid > 0,
            let command = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")),
            String(decoding: command, as: UTF8.self).contains(settingsFile.path)
        else { return }
        logger.notice("Stopping a TURN server an earlier layer dev left running", metadata: ["pid": "\(pid)"])
        kill(pid, SIGTERM)
        for _ in 0..<50 where kill(pid, 0) == 0 { usleep(100_000) }
    }

    static func findExecutable() -> String? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/usr/sbin"
        return path.split(separator: ":").map { "\($0)/turnserver" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Where coturn may keep its user database (it needs none: the secret is all it checks): its
    /// own folder, except as root, where coturn runs as `nobody`, which cannot enter the private
    /// data directory; then a folder of nobody's beside the PostgreSQL cluster's.
    static func databaseFolder(directory: URL) throws -> URL {
        guard geteuid() == 0 else { return directory.appendingPathComponent("coturn") }
        let folder = EmbeddedPostgres.serverFolder(for: directory).appendingPathComponent("coturn")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard let nobody = getpwnam("nobody"), chown(folder.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid) == 0 else {
            throw SubprocessError(description: "could not hand \(folder.path) to nobody")
        }
        chmod(folder.path, 0o700)
        return folder
    }

    /// A port free for both UDP and TCP (coturn listens on both).
    static func freePort() throws -> Int {
        for _ in 0..<20 {
            let port = try bound(SOCK_DGRAM, port: 0)
            if (try? bound(SOCK_STREAM, port: port)) != nil { return port }
        }
        throw SubprocessError(description: "no port is free for the TURN server")
    }

    /// Binds a socket of `type` to `port` on loopback (0: any) and closes it; the port bound.
    private static func bound(_ type: __socket_type, port: Int) throws -> Int {
        let descriptor = socket(AF_INET, Int32(type.rawValue), 0)
        guard descriptor >= 0 else { throw SubprocessError(description: "socket: \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = UInt16(port).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard ok else { throw SubprocessError(description: "port \(port) is taken") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
