// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The night cap (`volume.night`, `setNightCap`): from `from` to `to` local
/// time (across midnight when `to` is earlier) the level never exceeds
/// `maxLevel`. Pure value.
public struct NightCap: Equatable, Sendable {
    /// Minutes after local midnight.
    public var from: Int
    public var to: Int
    public var maxLevel: Double

    public init(from: Int, to: Int, maxLevel: Double) {
        self.from = from
        self.to = to
        self.maxLevel = maxLevel
    }

    /// Whether the window holds at `minuteOfDay` (local).
    public func contains(minuteOfDay m: Int) -> Bool {
        from < to ? (m >= from && m < to) : (m >= from || m < to)
    }

    /// `{"from":"22:00","to":"07:00","maxLevel":0.3}` (with `active` when published).
    func json(active: Bool?) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("from", .string(ScheduleRule.clockText(from))), ("to", .string(ScheduleRule.clockText(to))),
            ("maxLevel", .number(maxLevel)),
        ]
        if let active { members.append(("active", .bool(active))) }
        return .object(members)
    }

    /// Parses `{"from","to","maxLevel"}` or `null` at `path` (`volume.night`).
    /// `volumeMaxLevel` bounds the cap; `relativeVolume` refuses any cap (no level exists).
    static func parse(_ value: JSONValue, path: String, volumeMaxLevel: Double, relativeVolume: Bool) throws(ConfigError) -> NightCap? {
        if value == .null { return nil }
        if relativeVolume {
            throw ConfigError(path: path, message: "volume.mode gpio-step has no level to cap; set volume.night to null")
        }
        var r = try ConfigReader(value, path: path)
        var minutes: [Int] = []
        for key in ["from", "to"] {
            guard let raw = r.raw(key) else { throw r.fail(key, "missing (expected \"HH:MM\")") }
            guard let text = raw.stringValue else { throw r.fail(key, "expected a string \"HH:MM\", got \(raw.kindDescription)") }
            guard let m = ScheduleRule.minuteOfDay(text) else {
                throw r.fail(key, "expected \"HH:MM\" (00:00 to 23:59), got \(JSONValue.string(text).jsonText)")
            }
            minutes.append(m)
        }
        if minutes[0] == minutes[1] { throw r.fail("to", "must differ from from (\(ScheduleRule.clockText(minutes[0])))") }
        guard r.raw("maxLevel") != nil else { throw r.fail("maxLevel", "missing (expected a number in [0, 1])") }
        let level = try r.double("maxLevel", default: 0, in: 0...1)
        try r.finish()
        return NightCap(from: minutes[0], to: minutes[1], maxLevel: min(VolumeControlState.tidy(level), volumeMaxLevel))
    }
}

/// A value set over MQTT and the configuration value it was set over:
/// the MQTT value holds (across restarts) until the config file's value
/// for that key changes — the last writer wins.
public struct ConfigOverride<Value: Equatable & Sendable>: Equatable, Sendable {
    public var value: Value
    /// The config file's value when the MQTT change was made.
    public var over: Value

    public init(value: Value, over: Value) {
        self.value = value
        self.over = over
    }

    /// The value in force with the config file saying `configured`, and the
    /// override kept (nil once the file's value changed since it was made).
    static func resolve(_ override: ConfigOverride?, configured: Value) -> (value: Value, kept: ConfigOverride?) {
        guard let override, override.over == configured else { return (configured, nil) }
        return (override.value, override)
    }
}
