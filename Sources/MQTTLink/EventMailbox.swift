// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import Synchronization
import SpeakerPorts

/// A queue from libmosquitto's network thread to the main loop: a
/// mutex-protected array plus an eventfd that is readable while events wait.
/// `post` may be called from any thread; `drain` from the consumer only.
final class EventMailbox<Event: Sendable>: Sendable {
    private let waker: EventFD
    private let pending = Mutex<[Event]>([])
    /// Set by the consumer while it produces events itself and drains right
    /// after (the main thread reading the socket): posts then skip the
    /// eventfd write, and the drain its read.
    private let quiet = Atomic<Bool>(false)
    /// Set after each eventfd write: a drain reads (resets) the eventfd only
    /// then, not on every call.
    private let signalled = Atomic<Bool>(false)

    /// The eventfd (non-blocking, close-on-exec), readable while events wait.
    var fd: Int32 { waker.fd }

    init() throws(MQTTError) {
        waker = try makeEventFD()
    }

    /// Appends `event` and wakes the consumer. Called on libmosquitto's thread.
    func post(_ event: Event) {
        pending.withLock { $0.append(event) }
        if !quiet.load(ordering: .relaxed) { signal() }
    }

    /// Writes the eventfd, then notes it (in this order: a drain that misses
    /// the note leaves the eventfd readable, so the consumer comes back).
    private func signal() {
        waker.signal()
        signalled.store(true, ordering: .releasing)
    }

    /// Runs `body` (on the consumer's thread) with posts not signalled;
    /// the consumer drains right after.
    func quietly<R>(_ body: () -> R) -> R {
        quiet.store(true, ordering: .relaxed)
        defer { quiet.store(false, ordering: .relaxed) }
        return body()
    }

    /// Wakes the consumer without an event (it then serves the link).
    func nudge() {
        signal()
    }

    /// Takes every pending event. Resets the eventfd (when a post wrote it)
    /// *before* taking the queue, so an event posted concurrently either
    /// comes back now or leaves the fd readable: no wake-up is lost.
    func drain() -> [Event] {
        if signalled.exchange(false, ordering: .acquiringAndReleasing) { waker.drain() }
        return pending.withLock { queue in
            let events = queue
            queue.removeAll(keepingCapacity: true)
            return events
        }
    }
}

/// Waits up to `milliseconds` for `fd` to become readable (poll(2), EINTR
/// retried). Returns false on timeout.
func waitReadable(_ fd: Int32, milliseconds: Int) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    while true {
        let n = poll(&entry, 1, Int32(clamping: max(0, milliseconds)))
        if n < 0 && errno == EINTR { continue }
        return n > 0
    }
}

/// SpeakerSystem's eventfd, with its error re-typed for this module.
func makeEventFD() throws(MQTTError) -> EventFD {
    do {
        return try EventFD()
    } catch {
        throw MQTTError(system: error)
    }
}
