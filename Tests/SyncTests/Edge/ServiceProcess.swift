import AsyncHTTPClient
import Foundation
import LayerServer
import LayerTesting

/// One service executable (`layer-sync`, `layer-auth`, …) run as its own process, as a container
/// runs it: started, killed and started again on the same port.
actor ServiceProcess {
    let executable: String
    let environment: [String: String]
    let baseURL: String
    private var child: ChildProcess?
    /// Everything every run of it wrote.
    private var outputs: [String] = []
    /// How long each start took until `GET /health/ready?peers=false` answered 200.
    private(set) var readyAfter: [Duration] = []

    init(_ executable: String, port: Int, environment: [String: String]) {
        self.executable = executable
        self.baseURL = "http://127.0.0.1:\(port)"
        self.environment = environment.merging(["LAYER_HOST": "127.0.0.1", "LAYER_PORT": String(port)]) { $1 }
    }

    /// Starts the process and waits until it is ready (its database answers; its peers may not yet).
    func start() async throws {
        let started = ContinuousClock.now
        let child = try ChildProcess(try ChildProcess.builtProduct(executable), [], environment: environment)
        self.child = child
        let client = TestClient(baseURL: baseURL)
        while ContinuousClock.now - started < .seconds(60) {
            if let ready = try? await client.send(
                HTTPClientRequest(url: baseURL + "/health/ready?peers=false"), timeout: .seconds(2)),
                ready.status == 200
            {
                readyAfter.append(ContinuousClock.now - started)
                return
            }
            if let status = Subprocess.exitStatus(of: child.pid, block: false) {
                throw FixtureError("\(executable) exited with \(status): \(child.output)")
            }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw FixtureError("\(executable) was not ready within 60 s: \(child.output)")
    }

    /// SIGKILL, as the OOM killer or a lost node ends a process; returns once it is gone.
    func kill() async throws {
        guard let child else { return }
        child.signal(SIGKILL)
        guard try await child.wait(timeout: .seconds(10)) != nil else { throw FixtureError("\(executable) outlived SIGKILL") }
        outputs.append(child.output)
        self.child = nil
    }

    /// SIGTERM; the exit status (nil: still running 30 s later, then killed).
    @discardableResult
    func stop() async throws -> Int32? {
        guard let child else { return nil }
        child.signal(SIGTERM)
        let status = try await child.wait(timeout: .seconds(30))
        if status == nil { child.signal(SIGKILL) }
        outputs.append(child.output)
        self.child = nil
        return status
    }

    /// What every run so far wrote, the current one included.
    var output: String { (outputs + [child?.output ?? ""]).joined(separator: "\n") }
}
