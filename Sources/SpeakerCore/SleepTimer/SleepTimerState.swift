// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The sleep timer domain: the running timer, held by the speaker on its
/// monotonic clock, and the long-fade multiplier it lowers. Its reducer is in
/// `SleepTimerState+Reduce`; `Speaker+SleepTimer` composes it with the
/// transport (the timer pauses playback when it ends; a pause ends the timer).
///
/// Timeline: at `endsAt − fadeSeconds` the engine's long fade takes the
/// multiplier to 0 along the volume curve over the time left; at `endsAt`
/// playback pauses (the session stays, so a press in the morning resumes it)
/// and, once the engine reports the pause, the multiplier returns to 1 at
/// once: the level was never changed, only the multiplier on top of it.
public struct SleepTimerState: Equatable, Sendable {
    /// A running timer.
    public struct Running: Equatable, Sendable {
        /// The length as set (1…720).
        public var minutes: Int
        /// The fade-out that ends it (≤ the length).
        public var fadeSeconds: Int
        /// When it ends, on the monotonic clock.
        public var endsAt: MonotonicInstant
        /// When it ends by the wall clock as it read when the timer was set
        /// (for `session.sleepTimer.endsAt` and for a restart).
        public var endsAtWall: WallClockReading
        /// Whether the wall clock was synchronised when `endsAtWall` was taken.
        public var wallSynced: Bool
        /// The fade-out has begun.
        public var fading = false

        /// When the fade-out begins.
        public var fadeStartsAt: MonotonicInstant {
            MonotonicInstant(nanoseconds: endsAt.nanoseconds - min(endsAt.nanoseconds, UInt64(fadeSeconds) * 1_000_000_000))
        }
    }

    /// The minutes a long press of the encoder's switch steps through (then off).
    public static let gestureChoices = [15, 30, 60, 90]
    /// A fade cut short (cancelled, restarted, a knob turn) ramps back this fast.
    public static let rampBackMs = 2000

    /// The timer, nil when none runs.
    public var running: Running?
    /// The long-fade multiplier is below 1 (a fade ran, or one is under way).
    public var multiplierLowered = false
    /// The last action's instant: `remainingSeconds` is measured from it.
    var now = MonotonicInstant(nanoseconds: 0)
    /// A timer read from the state file, applied (or dropped) on `.start`.
    var restored: PersistedSleepTimer?

    public init() {}

    /// When the timer next has work to do (the fade's start, then its end).
    var deadline: MonotonicInstant? {
        guard let running else { return nil }
        return running.fading ? running.endsAt : running.fadeStartsAt
    }

    /// Whole seconds left at `now`, rounded up.
    func remainingSeconds(at now: MonotonicInstant) -> Int {
        guard let running else { return 0 }
        let ns = running.endsAt.nanoseconds(since: now)
        return Int((ns + 999_999_999) / 1_000_000_000)
    }

    /// `session.sleepTimer` as of `now` (nil when no timer runs).
    var attributes: SleepTimerAttributes? {
        guard let running else { return nil }
        return SleepTimerAttributes(endsAt: running.endsAtWall.iso8601, minutes: running.minutes,
                                    fadeSeconds: running.fadeSeconds, remainingSeconds: remainingSeconds(at: now),
                                    fading: running.fading)
    }

    /// The next choice of the long-press cycle: the first of `gestureChoices`
    /// longer than the running timer's length; nil (off) after the last.
    var nextGestureChoice: Int? {
        guard let running else { return Self.gestureChoices[0] }
        return Self.gestureChoices.first { $0 > running.minutes }
    }
}

/// A running timer as kept in the state file: its wall-clock end and whether
/// that clock was synchronised, so a restart can tell how much is left.
public struct PersistedSleepTimer: Equatable, Sendable {
    public var endsAt: WallClockReading
    public var minutes: Int
    public var fadeSeconds: Int
    public var clockSynced: Bool

    public init(endsAt: WallClockReading, minutes: Int, fadeSeconds: Int, clockSynced: Bool) {
        self.endsAt = endsAt
        self.minutes = minutes
        self.fadeSeconds = fadeSeconds
        self.clockSynced = clockSynced
    }
}

extension PersistedSleepTimer {
    /// `{"endsAtMs": …, "minutes": …, "fadeSeconds": …, "clockSynced": …}`:
    /// the end in milliseconds since the Unix epoch.
    var json: JSONValue {
        .object([("endsAtMs", .number(Double(endsAt.seconds * 1000 + Int64(endsAt.milliseconds)))),
                 ("minutes", .number(Double(minutes))), ("fadeSeconds", .number(Double(fadeSeconds))),
                 ("clockSynced", .bool(clockSynced))])
    }

    /// Validates the stored member: every field present, typed and in range.
    static func decode(_ value: JSONValue) throws(PersistedState.DecodeError) -> PersistedSleepTimer {
        guard case .object(let members) = value else { throw PersistedState.DecodeError(reason: "sleepTimer must be an object") }
        let known: Set<String> = ["endsAtMs", "minutes", "fadeSeconds", "clockSynced"]
        if let unknown = members.first(where: { !known.contains($0.key) }) {
            throw PersistedState.DecodeError(reason: "sleepTimer: unknown member \"\(unknown.key)\"")
        }
        func whole(_ key: String, _ range: ClosedRange<Double>) throws(PersistedState.DecodeError) -> Double {
            guard let n = value[key]?.numberValue, n.isFinite, n == n.rounded(), range.contains(n) else {
                throw PersistedState.DecodeError(reason: "sleepTimer.\(key) must be a whole number in \(range), got \(value[key]?.jsonText ?? "nothing")")
            }
            return n
        }
        let endsAtMs = Int64(try whole("endsAtMs", -1e15...1e15))
        let minutes = Int(try whole("minutes", 1...720))
        let fade = Int(try whole("fadeSeconds", 0...1800))
        guard let synced = value["clockSynced"]?.boolValue else { throw PersistedState.DecodeError(reason: "sleepTimer.clockSynced must be true or false") }
        let seconds = endsAtMs >= 0 ? endsAtMs / 1000 : (endsAtMs - 999) / 1000
        return PersistedSleepTimer(endsAt: WallClockReading(seconds: seconds, milliseconds: Int(endsAtMs - seconds * 1000)),
                                   minutes: minutes, fadeSeconds: fade, clockSynced: synced)
    }
}
