/// A dictionary of at most `capacity` entries that, to make room, forgets the entry used least
/// recently. Reading or writing an entry makes it the most recent one; every operation takes
/// constant time. The order of use is a doubly linked list threaded by index through the slots
/// that hold the entries, so nothing is allocated once the table is full.
public struct LRUTable<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value
        /// The neighbours in the order of use, -1 at either end.
        var newer: Int
        var older: Int
    }

    public let capacity: Int
    private var slots: [Slot] = []
    private var index: [Key: Int] = [:]
    private var newest = -1
    private var oldest = -1

    public init(capacity: Int) {
        precondition(capacity > 0, "a table holds at least one entry")
        self.capacity = capacity
    }

    public var count: Int { index.count }

    /// The value of `key`, which becomes the most recently used; nil if the table has none.
    public mutating func use(_ key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        makeNewest(slot)
        return slots[slot].value
    }

    /// Stores `value` under `key` as the most recently used entry; when the table is full and
    /// `key` is new, the least recently used entry gives up its slot.
    public mutating func set(_ key: Key, _ value: Value) {
        if let slot = index[key] {
            slots[slot].value = value
            makeNewest(slot)
            return
        }
        let slot: Int
        if slots.count < capacity {
            slot = slots.count
            slots.append(Slot(key: key, value: value, newer: -1, older: -1))
        } else {
            slot = oldest
            unlink(slot)
            index[slots[slot].key] = nil
            slots[slot] = Slot(key: key, value: value, newer: -1, older: -1)
        }
        index[key] = slot
        link(slot)
    }

    /// Whether `key` has an entry, without counting as a use.
    public func contains(_ key: Key) -> Bool { index[key] != nil }

    private mutating func makeNewest(_ slot: Int) {
        guard slot != newest else { return }
        unlink(slot)
        link(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (slots[slot].newer, slots[slot].older)
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
    }

    /// Puts an unlinked slot at the newest end.
    private mutating func link(_ slot: Int) {
        slots[slot].newer = -1
        slots[slot].older = newest
        if newest >= 0 { slots[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }
}
