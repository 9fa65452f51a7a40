// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The schedule domain: the rules and the night cap in force (from the
/// config file or set over MQTT), how far through wall time the rules have
/// been fired, the next occurrence, and when the core looks again. Its
/// reducer is `evaluate`; `Speaker+Schedule` carries out what it decides.
public struct ScheduleState: Equatable, Sendable {
    public internal(set) var rules: [ScheduleRule] = []
    public internal(set) var nightCap: NightCap?
    /// Rules set over MQTT, with the config rules they were set over.
    public internal(set) var rulesOverride: ConfigOverride<[ScheduleRule]>?
    /// A night cap set over MQTT, with the config cap it was set over.
    public internal(set) var nightCapOverride: ConfigOverride<NightCap?>?
    /// Wall time (Unix seconds) through which every occurrence has been
    /// considered: nil until the clock is first trusted. Never moves back,
    /// except after a step back of more than a day and a half.
    public internal(set) var through: Int64?
    /// `through` as of the last rule fired: what the state file keeps, so a
    /// restart fires nothing that already fired (and the file is written
    /// when a rule fires, not on every evaluation).
    public internal(set) var firedThrough: Int64?
    /// The clock is trusted: synchronised, or `clock.requireSync` is false.
    public internal(set) var trusted = false
    /// The kernel's sync flag at the last evaluation (published in `schedules`).
    public internal(set) var synced = false
    /// The next rule to fire: its index and instant (nil: none, or the clock is not trusted).
    public internal(set) var next: NextFire?
    /// The night cap's window holds now (never while the clock is not trusted).
    public internal(set) var nightActive = false
    /// When the core evaluates the schedule again (a monotonic instant
    /// derived from a wall-clock one via the offset at the last evaluation).
    public internal(set) var deadline: MonotonicInstant?
    /// The next step of the night cap's slow ramp down, while one runs.
    public internal(set) var rampAt: MonotonicInstant?

    /// A `stop` rule's fade-out in progress: its long-fade ticket and rule.
    var fadingOut: FadeOut?

    struct FadeOut: Equatable, Sendable {
        var ticket: UInt64
        var rule: Int
    }

    /// An occurrence to come: rule `rule` at `at` (Unix seconds).
    public struct NextFire: Equatable, Sendable {
        public var rule: Int
        public var at: Int64
    }

    public init() {}

    /// What the clock tells one evaluation.
    struct ClockFacts {
        var wall: WallClockReading
        var synced: Bool
        var requireSync: Bool
        var zone: TimeZoneRules
    }

    /// Evaluates at `now`: fires the occurrences between `through` and the
    /// wall clock (at most `ScheduleClock.catchUpSeconds` back), works out the
    /// next one and the night cap's window, and sets the next deadline.
    /// Returns the occurrences to fire (rule index and Unix seconds), in the
    /// order their times came. Nothing fires while the clock is not trusted.
    mutating func evaluate(_ clock: ClockFacts, at now: MonotonicInstant) -> [(at: Int64, rule: Int)] {
        synced = clock.synced
        trusted = clock.synced || !clock.requireSync
        let hasWork = rules.contains { $0.enabled } || nightCap != nil
        guard trusted else {
            // Nothing to wait for: the runtime reports the sync (`.clockSyncChanged`) and steps.
            next = nil
            nightActive = false
            deadline = nil
            return []
        }
        let wall = clock.wall.seconds
        var from = wall - ScheduleClock.catchUpSeconds
        if let t = through {
            if wall >= t {
                from = max(t, from)
            } else if t - wall > ScheduleClock.resetBackwardSeconds {
                through = wall
                from = wall
            } else {
                from = t  // a small step back: wait until the clock passes `through` again
            }
        }
        var fired: [(at: Int64, rule: Int)] = []
        if wall > from {
            for (index, rule) in rules.enumerated() where rule.enabled {
                fired += ScheduleClock.occurrences(rule, after: from, through: wall, zone: clock.zone).map { ($0, index) }
            }
        }
        through = max(through ?? wall, wall)
        if !fired.isEmpty { firedThrough = through }
        let after = through ?? wall
        next = rules.enumerated().filter { $0.element.enabled }
            .compactMap { item in ScheduleClock.next(item.element, after: after, zone: clock.zone).map { NextFire(rule: item.offset, at: $0) } }
            .min { ($0.at, $0.rule) < ($1.at, $1.rule) }
        nightActive = nightCap?.contains(minuteOfDay: ScheduleClock.minuteOfDay(at: wall, zone: clock.zone)) ?? false
        var wakeAt = [next?.at].compactMap { $0 }
        if let cap = nightCap {
            wakeAt += [cap.from, cap.to].compactMap { ScheduleClock.nextTimeOfDay($0, after: wall, zone: clock.zone) }
        }
        let wallMs = wall * 1000 + Int64(clock.wall.milliseconds)
        let waitMs = min(wakeAt.min().map { max(0, $0 * 1000 - wallMs) } ?? ScheduleClock.maxWaitMs, ScheduleClock.maxWaitMs)
        deadline = hasWork ? now.advanced(byMilliseconds: Int(waitMs)) : nil
        return fired.sorted { ($0.at, $0.rule) < ($1.at, $1.rule) }
    }

    /// The level cap in force now: `volume.maxLevel`, lowered by an active night cap.
    func maxLevel(volumeMaxLevel: Double) -> Double {
        guard nightActive, let cap = nightCap else { return volumeMaxLevel }
        return min(cap.maxLevel, volumeMaxLevel)
    }

    /// The retained `schedules` payload.
    func payload(iso8601: (Int64) -> String) -> [UInt8] {
        let nextValue: JSONValue = next.map { .object([("rule", .number(Double($0.rule))), ("at", .string(iso8601($0.at)))]) } ?? .null
        return JSONValue.object([("rules", ScheduleRule.json(rules)), ("clockSynced", .bool(synced)), ("next", nextValue)]).serialized()
    }
}
