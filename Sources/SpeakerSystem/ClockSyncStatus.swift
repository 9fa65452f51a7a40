// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// The kernel's NTP-sync status (``SystemFacts/isClockSynchronised()``, one
/// `clock_adjtime` call) read at most once per `maxAgeNs`: the core asks for
/// it with every `session` it builds, i.e. on every command's path, while
/// the status changes when NTP syncs, about once per boot. A reading up to a
/// second old is the same fact for `clockSynced`; the core still decides
/// what to publish with it. Any thread (the live core calls it from the loop).
public final class ClockSyncStatus: Sendable {
    /// Nanoseconds on ``MonotonicClock`` of the last reading; 0 = none yet.
    private let readAt = Atomic<UInt64>(0)
    private let lastReading = Atomic<Bool>(false)
    private let maxAgeNs: UInt64
    private let read: @Sendable () -> Bool

    /// `read` is the real question (live: `SystemFacts.isClockSynchronised`).
    public init(maxAgeNs: UInt64 = 1_000_000_000,
                read: @escaping @Sendable () -> Bool = { SystemFacts.isClockSynchronised() }) {
        self.maxAgeNs = maxAgeNs
        self.read = read
    }

    /// The last reading if it is younger than `maxAgeNs` at `now`, else a new one.
    public func isSynchronised(now: UInt64 = MonotonicClock.now()) -> Bool {
        let last = readAt.load(ordering: .acquiring)
        if last != 0 && now >= last && now - last < maxAgeNs { return lastReading.load(ordering: .relaxed) }
        let synced = read()
        lastReading.store(synced, ordering: .relaxed)
        readAt.store(max(now, 1), ordering: .releasing)
        return synced
    }
}
