// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import Synchronization
import SpeakerPorts

/// Tracks QoS 1 messages libmosquitto has not yet seen acknowledged, so
/// `shutdown` can wait for PUBACKs. `published` is called on the main thread
/// after `mosquitto_publish_v5` returns a message id; `acknowledged` on
/// libmosquitto's thread from `on_publish`. Because the PUBACK can arrive
/// before `mosquitto_publish_v5` has even returned, each side records what
/// the other has not seen yet.
final class PublishTracker: Sendable {
    private struct State {
        /// QoS 1 ids published and not yet acknowledged.
        var inFlight: Set<Int32> = []
        /// ids acknowledged before `published` saw them.
        var early: Set<Int32> = []
        /// QoS 0 ids whose on_publish has not come yet (nothing waits for them).
        var untracked: Set<Int32> = []
        /// QoS 1 messages acknowledged so far.
        var acknowledged = 0
    }

    /// Bound for the bookkeeping sets: ids of messages dropped without a
    /// callback (e.g. QoS 0 during a disconnect) must not pile up forever.
    private static let limit = 1024

    private let state = Mutex(State())
    /// Readable after a tracked message was acknowledged while `wait` ran.
    private let waker: EventFD
    /// Set while `wait` runs: only then is an acknowledgement worth an
    /// eventfd write (a setVolume gets three PUBACKs).
    private let waiting = Atomic<Bool>(false)
    /// Set while the MQTT service waits to hear of acknowledgements (results
    /// queued behind the ones in flight): each one then wakes the main loop.
    let wakesMainLoop = Atomic<Bool>(false)
    /// The link's monotonic clock (nanoseconds), for `wait`'s deadline.
    private let clock: @Sendable () -> UInt64

    init(clock: @escaping @Sendable () -> UInt64) throws(MQTTError) {
        waker = try makeEventFD()
        self.clock = clock
    }

    /// Records a message libmosquitto accepted. Main thread.
    func published(messageID mid: Int32, qos: Int) {
        state.withLock { s in
            if s.early.remove(mid) != nil { return }
            if qos > 0 {
                s.inFlight.insert(mid)
            } else {
                if s.untracked.count >= Self.limit { s.untracked.removeAll() }
                s.untracked.insert(mid)
            }
        }
    }

    /// Records an on_publish callback; whether it completed a tracked QoS 1
    /// message. libmosquitto's thread.
    @discardableResult
    func acknowledged(messageID mid: Int32) -> Bool {
        let completed = state.withLock { s -> Bool in
            if s.inFlight.remove(mid) != nil {
                s.acknowledged += 1
                return true
            }
            if s.untracked.remove(mid) != nil { return false }
            if s.early.count >= Self.limit { s.early.removeAll() }
            s.early.insert(mid)
            return false
        }
        if completed && waiting.load(ordering: .acquiring) { waker.signal() }
        return completed
    }

    /// Whether `mid` still waits for its PUBACK.
    func isPending(_ mid: Int32) -> Bool {
        state.withLock { $0.inFlight.contains(mid) }
    }

    /// Number of QoS 1 messages still waiting for a PUBACK.
    var pendingCount: Int { state.withLock { $0.inFlight.count } }

    /// Number of QoS 1 messages acknowledged since the link started.
    var acknowledgedCount: Int { state.withLock { $0.acknowledged } }

    /// Blocks (on the eventfd, not by sleeping) until `done()` or `deadline`
    /// (milliseconds on the clock). Returns whether `done()` became true.
    func wait(deadline: Int, until done: () -> Bool) -> Bool {
        waiting.store(true, ordering: .releasing)
        defer { waiting.store(false, ordering: .releasing) }
        while !done() {
            let remaining = deadline - Int(clock() / 1_000_000)
            if remaining <= 0 { return false }
            if waitReadable(waker.fd, milliseconds: remaining) { waker.drain() }
        }
        return true
    }
}
