// SPDX-License-Identifier: Apache-2.0
/// When the rules' times happen: a rule's occurrence on one local day is one
/// instant (`TimeZoneRules.utc(fromLocal:)` picks it in a skipped or repeated
/// hour), and the schedule fires each occurrence inside the span of wall
/// time it moves through, so no occurrence can fire twice and none in a
/// skipped hour is lost. Pure functions of the rules, the zone and instants.
enum ScheduleClock {
    /// After the clock becomes trustworthy (first sync, a restart) or steps
    /// forward, rules whose time passed at most this long ago still fire
    /// once: a speaker that boots at 06:59 and syncs at 07:01 still wakes
    /// its sleeper for 07:00; one that was off all morning does not start
    /// playing at noon.
    static let catchUpSeconds: Int64 = 600
    /// A step back larger than this means the later time was wrong: the
    /// schedule starts afresh from the new time instead of waiting for the
    /// clock to pass the old one again.
    static let resetBackwardSeconds: Int64 = 36 * 3600
    /// After a step on an untrusted clock, the first look again: NTP marks
    /// the clock synchronised just after stepping it.
    static let stepRecheckMs: Int64 = 2_000
    /// The longest wait between evaluations even when nothing is due, so a
    /// slewed clock is re-read.
    static let maxWaitMs: Int64 = 15 * 60_000

    /// The instant of `rule` on the local day `day` (days since 1970-01-01 local).
    static func occurrence(_ rule: ScheduleRule, day: Int64, zone: TimeZoneRules) -> Int64? {
        guard rule.applies(onWeekday: CivilDate.weekday(days: day)) else { return nil }
        return zone.utc(fromLocal: day * 86_400 + Int64(rule.minuteOfDay) * 60)
    }

    /// The occurrences of `rule` in (`after`, `through`], ascending.
    static func occurrences(_ rule: ScheduleRule, after: Int64, through: Int64, zone: TimeZoneRules) -> [Int64] {
        guard through > after else { return [] }
        let first = floorDays(zone.local(fromUTC: after)) - 1
        let last = floorDays(zone.local(fromUTC: through)) + 1
        return (first...last).compactMap { occurrence(rule, day: $0, zone: zone) }.filter { $0 > after && $0 <= through }
    }

    /// The first occurrence of `rule` after `instant` (within eight days), or nil.
    static func next(_ rule: ScheduleRule, after instant: Int64, zone: TimeZoneRules) -> Int64? {
        let today = floorDays(zone.local(fromUTC: instant))
        for day in (today - 1)...(today + 8) {
            if let t = occurrence(rule, day: day, zone: zone), t > instant { return t }
        }
        return nil
    }

    /// The next instant after `instant` at which local time reads `minuteOfDay` (any day).
    static func nextTimeOfDay(_ minuteOfDay: Int, after instant: Int64, zone: TimeZoneRules) -> Int64? {
        next(ScheduleRule(minuteOfDay: minuteOfDay, action: .stop), after: instant, zone: zone)
    }

    /// Minutes after local midnight at `instant`.
    static func minuteOfDay(at instant: Int64, zone: TimeZoneRules) -> Int {
        let local = zone.local(fromUTC: instant)
        return Int((local - floorDays(local) * 86_400) / 60)
    }

    static func floorDays(_ seconds: Int64) -> Int64 {
        seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    }
}
