// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// The wall clock of a speaker on the simulated board: the host's clock
/// moved by an offset, and its sync flag optionally overridden, both set
/// through the board's control socket (`clock +SECONDS`, `clock synced on`).
/// A soak or an end-to-end test steps the speaker's time this way without
/// setting the host's, which every other process shares. Each change makes
/// ``fd`` readable, as ``ClockStepTimer`` does for a real step, so the
/// clock service reports it to the core at once.
///
/// Readings: any thread. Changes: the loop thread (the control socket).
// @unchecked Sendable: the offset and the override are atomics; the eventfd is immutable.
public final class SimulatedWallClock: @unchecked Sendable {
    /// The largest step one change may make (ten years, in seconds).
    public static let maxStepSeconds: Int64 = 10 * 366 * 86_400

    private let offsetSeconds = Atomic<Int64>(0)
    /// -1: the host's sync flag; 0: unsynchronised; 1: synchronised.
    private let syncOverride = Atomic<Int>(-1)
    private let steps: EventFD

    /// The descriptor to watch: readable after a change.
    public var fd: Int32 { steps.fd }

    public init() throws(SystemError) { steps = try EventFD() }

    /// The host's wall clock plus the offset.
    public func now() -> (seconds: Int64, nanoseconds: Int32) {
        let host = WallClock.now()
        return (host.seconds + offsetSeconds.load(ordering: .acquiring), host.nanoseconds)
    }

    /// The sync flag: the override if set, else `host`.
    public func synced(host: Bool) -> Bool {
        let override = syncOverride.load(ordering: .acquiring)
        return override < 0 ? host : override == 1
    }

    /// How far the clock is from the host's, in seconds.
    public var offset: Int64 { offsetSeconds.load(ordering: .acquiring) }

    /// Moves the clock by `seconds` (at most ``maxStepSeconds`` either way) and reports a step.
    public func step(bySeconds seconds: Int64) {
        let bounded = min(max(seconds, -Self.maxStepSeconds), Self.maxStepSeconds)
        _ = offsetSeconds.add(bounded, ordering: .acquiringAndReleasing)
        steps.signal()
    }

    /// Overrides the sync flag (nil: follow the host's again) and reports a step.
    public func setSynced(_ synced: Bool?) {
        syncOverride.store(synced.map { $0 ? 1 : 0 } ?? -1, ordering: .releasing)
        steps.signal()
    }

    /// After ``fd`` became readable: consumes it; true when a change came.
    public func takeStep() -> Bool { steps.drain() > 0 }
}
