import Foundation
import LayerDevelopment
import LayerServer
import Logging

// What the benchmarks measure of processes: open-file limits, idle memory, CPU time.

/// Starts the service binary built beside this one, lets it settle, and reports its resident
/// memory while idle.
func idleMemory(of service: String, database: DatabaseSettings, authURL: String, logger: Logger) async throws {
    let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    let binary = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(service).path
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        print("idle memory: build \(service) first (swift build -c release --product \(service))")
        return
    }
    let environment = [
        "LAYER_DATABASE_URL": database.url, "LAYER_OPERATOR_TOKEN": "bench", "LAYER_CONTENT_LINK_SECRET": "bench",
        "LAYER_CA_KEY_SECRET": "bench", "LAYER_PORT": "0", "LAYER_HOST": "127.0.0.1", "LOG_LEVEL": "error",
        "LAYER_AUTH_URL": authURL,
    ].merging(InternalTokens.random().environment) { $1 }
    let pid = try Subprocess.spawn(binary, [], environment: environment, outputPath: "/dev/null")
    try await Task.sleep(for: .seconds(5))
    let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
    let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? "VmRSS: ?"
    // Anonymous memory is what the process itself allocated; the rest of RSS is mapped code.
    let smaps = (try? String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8)) ?? ""
    let anonymous = smaps.split(separator: "\n").filter { $0.hasPrefix("Anonymous:") }
        .compactMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }.reduce(0, +)
    print(
        "idle \(service) after 5 s: resident \(rss.replacingOccurrences(of: "VmRSS:", with: "").trimmingCharacters(in: .whitespaces)), of which anonymous \(anonymous) kB"
    )
    kill(pid, SIGTERM)
    _ = Subprocess.exitStatus(of: pid, block: true)
}

/// CPU seconds spent by this process (server and load generator) and by PostgreSQL's processes
/// (those of the `nobody` user, as the embedded cluster runs as root), between laps.
struct CPUTime {
    struct Split {
        var process: Double
        var postgres: Double
    }

    private var last = CPUTime.now()

    mutating func lap() -> Split {
        let now = Self.now()
        defer { last = now }
        return Split(process: now.process - last.process, postgres: now.postgres - last.postgres)
    }

    /// The user and system CPU seconds of process `pid` ("self" for this one).
    static func seconds(of pid: String) -> Double {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return ((Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)) / ticks
    }

    static func now() -> Split {
        let postgres = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [])
            .filter { $0.allSatisfy(\.isNumber) }
            .filter { (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.hasPrefix("postgres") == true }
            .map { seconds(of: $0) }.reduce(0, +)
        return Split(process: seconds(of: "self"), postgres: postgres)
    }
}
