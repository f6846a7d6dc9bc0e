import Synchronization

/// A port learnt once a socket is bound.
final class BoundPort: Sendable {
    private let port: Atomic<Int>
    init(_ port: Int) { self.port = Atomic(port) }
    var value: Int {
        get { port.load(ordering: .acquiring) }
        set { port.store(newValue, ordering: .releasing) }
    }
}
