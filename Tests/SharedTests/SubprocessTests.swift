import Foundation
import LayerDevelopment
import LayerServer
import Testing

/// Children of the suite (PostgreSQL's tools, coturn in the tests) stop when asked.
@Suite struct SubprocessTests {
    @Test("A child started by a thread that blocks SIGTERM still stops on SIGTERM")
    func childrenDoNotInheritBlockedSignals() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("subprocess-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: output) }
        // Blocked on this thread only while the child is spawned, as a server's threads do.
        var blocked = sigset_t()
        var previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let pid = try Subprocess.spawn("/bin/sleep", ["30"], outputPath: output)
        pthread_sigmask(SIG_SETMASK, &previous, nil)

        kill(pid, SIGTERM)
        var status: Int32?
        for _ in 0..<50 where status == nil {
            status = Subprocess.exitStatus(of: pid, block: false)
            if status == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        if status == nil { kill(pid, SIGKILL) }
        #expect(status == 128 + SIGTERM)
    }
}
