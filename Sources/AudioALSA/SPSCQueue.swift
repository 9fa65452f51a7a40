// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A bounded single-producer / single-consumer lock-free ring buffer.
///
/// Exactly one thread may call `push`/`freeCount` (the producer) and exactly
/// one thread may call `pop` (the consumer). Neither side allocates or locks:
/// elements are moved into and out of preallocated slots, so a class element
/// is never released inside the queue (the consumer receives the reference).
final class SPSCQueue<Element>: @unchecked Sendable {
    // @unchecked Sendable: slots are only written by the producer before it
    // publishes them (release store of `tail`) and only read by the consumer
    // after it observes them (acquire load of `tail`), and vice versa for
    // `head`; so each slot is owned by one side at a time.
    private let slots: UnsafeMutablePointer<Element?>
    private let mask: Int
    let capacity: Int
    private let head = Atomic<Int>(0)  // next slot to pop (consumer-owned)
    private let tail = Atomic<Int>(0)  // next slot to push (producer-owned)

    /// A queue holding up to `minimumCapacity` rounded up to a power of two.
    init(minimumCapacity: Int) {
        var c = 2
        while c < minimumCapacity { c <<= 1 }
        capacity = c
        mask = c - 1
        slots = .allocate(capacity: c)
        slots.initialize(repeating: nil, count: c)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    /// Producer: appends `element`; false (element not taken) when full.
    func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        if t &- h >= capacity { return false }
        slots[t & mask] = element
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Producer: how many more elements `push` will accept right now (at least).
    var freeCount: Int {
        capacity - (tail.load(ordering: .relaxed) &- head.load(ordering: .acquiring))
    }

    /// Consumer: removes and returns the oldest element, or nil when empty.
    func pop() -> Element? {
        let h = head.load(ordering: .relaxed)
        let t = tail.load(ordering: .acquiring)
        if h == t { return nil }
        let element = slots[h & mask].take()
        head.store(h &+ 1, ordering: .releasing)
        return element
    }
}
