// SPDX-License-Identifier: Apache-2.0
/// When to write the persisted state: rate-limited so a knob spin does not
/// write the SD card on every detent, yet a change reaches the disk soon.
///
/// A change arms a deadline `settleMs` after it (so a burst of detents
/// becomes one write), but never sooner than `minIntervalMs` after the last
/// write; further changes before the deadline do not push it back, so even
/// an endless spin saves every `minIntervalMs`. Pure value, owned by the
/// core; time comes in with each call.
public struct StateSaveSchedule: Equatable, Sendable {
    /// Quiet time after a change before it is written.
    public static let settleMs = 500
    /// At most one write per this interval.
    public static let minIntervalMs = 2000

    /// The state as last written (or as loaded at start): what is on disk.
    public private(set) var saved: PersistedState?
    /// When the last write was asked for.
    public private(set) var lastWriteAt: MonotonicInstant?
    /// When the pending change is due to be written; nil when nothing is pending.
    public private(set) var deadline: MonotonicInstant?

    /// `saved`: the state found on disk at start (nil when none was usable).
    public init(saved: PersistedState?) { self.saved = saved }

    /// Notes the current state at `now`; arms the deadline when it differs
    /// from what is on disk and nothing is pending yet.
    public mutating func observe(_ current: PersistedState, at now: MonotonicInstant) {
        guard current != saved else {
            deadline = nil  // changed and changed back before the write: nothing to do
            return
        }
        guard deadline == nil else { return }
        var due = now.advanced(byMilliseconds: Self.settleMs)
        if let last = lastWriteAt { due = max(due, last.advanced(byMilliseconds: Self.minIntervalMs)) }
        deadline = due
    }

    /// The state to write at `now`, if a write is due (and records it as written).
    /// `force` writes a pending change regardless of the deadline (shutdown).
    public mutating func due(_ current: PersistedState, at now: MonotonicInstant, force: Bool = false) -> PersistedState? {
        guard current != saved else {
            deadline = nil
            return nil
        }
        guard force || (deadline.map { $0 <= now } ?? false) else { return nil }
        saved = current
        lastWriteAt = now
        deadline = nil
        return current
    }
}
