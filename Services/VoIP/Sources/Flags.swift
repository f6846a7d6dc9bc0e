import Synchronization

/// A flag that goes up once and stays up.
final class Latch: Sendable {
    private let value = Atomic<Bool>(false)
    var isOpen: Bool { value.load(ordering: .acquiring) }
    func open() { value.store(true, ordering: .releasing) }
}

/// A port learnt once a socket is bound.
final class BoundPort: Sendable {
    private let port: Atomic<Int>
    init(_ port: Int) { self.port = Atomic(port) }
    var value: Int {
        get { port.load(ordering: .acquiring) }
        set { port.store(newValue, ordering: .releasing) }
    }
}
