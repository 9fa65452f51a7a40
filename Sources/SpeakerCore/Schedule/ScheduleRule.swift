// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// One schedule rule: at a local time of day, on some weekdays, start
/// playback (fading in) or stop it (fading out). Parsed by `ScheduleRule.parse`
/// from the config file, a `setSchedules` command and the state file alike,
/// so all three refuse the same rules with the same messages. Pure value.
public struct ScheduleRule: Equatable, Sendable {
    public enum Action: String, Equatable, Sendable, CaseIterable { case play, stop }

    /// Minutes after local midnight (0...1439).
    public var minuteOfDay: Int
    /// Bit `d` set: the rule applies on weekday `d` (0 = Monday … 6 = Sunday).
    public var days: UInt8
    public var action: Action
    /// `play` only: the sound to play (nil: the selected one).
    public var soundID: String?
    /// `play` only: the level to play at (nil: the current one); absolute volume only.
    public var level: Double?
    /// The fade-in (`play`) or fade-out (`stop`), in seconds.
    public var fadeSeconds: Int
    public var enabled: Bool

    /// Most rules a speaker keeps.
    public static let maxRules = 16
    /// `fadeSeconds` when a rule gives none.
    public static let defaultFadeSeconds = 30
    /// The longest fade a rule may ask for (an hour).
    public static let maxFadeSeconds = 3600
    static let dayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let everyDay: UInt8 = 0x7F

    public init(minuteOfDay: Int, days: UInt8 = 0x7F, action: Action, soundID: String? = nil, level: Double? = nil,
                fadeSeconds: Int = ScheduleRule.defaultFadeSeconds, enabled: Bool = true) {
        self.minuteOfDay = minuteOfDay
        self.days = days
        self.action = action
        self.soundID = soundID
        self.level = level
        self.fadeSeconds = fadeSeconds
        self.enabled = enabled
    }

    /// `07:05`.
    public var at: String { Self.clockText(minuteOfDay) }

    static func clockText(_ minute: Int) -> String {
        let h = minute / 60, m = minute % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }

    /// Whether the rule applies on weekday `d` (0 = Monday).
    func applies(onWeekday d: Int) -> Bool { days & (1 << UInt8(d)) != 0 }

    /// The normalised form published on `schedules` and kept in the state
    /// file: every key present, `days` the full list in week order.
    public var json: JSONValue {
        .object([
            ("at", .string(at)),
            ("days", .array(Self.dayNames.indices.filter { applies(onWeekday: $0) }.map { .string(Self.dayNames[$0]) })),
            ("action", .string(action.rawValue)),
            ("soundID", soundID.map(JSONValue.string) ?? .null),
            ("level", level.map(JSONValue.number) ?? .null),
            ("fadeSeconds", .number(Double(fadeSeconds))),
            ("enabled", .bool(enabled)),
        ])
    }

    /// Parses a list of rules at `path` (`schedules`). `relativeVolume`: the
    /// device has no level (`gpio-step`), so a rule's `level` is refused.
    /// Errors name the key path: `schedules[0].at: expected "HH:MM", got "25:00"`.
    public static func parseList(_ value: JSONValue, path: String, relativeVolume: Bool) throws(ConfigError) -> [ScheduleRule] {
        guard case .array(let items) = value else {
            throw ConfigError(path: path, message: "expected an array of rules, got \(value.kindDescription)")
        }
        guard items.count <= maxRules else {
            throw ConfigError(path: path, message: "at most \(maxRules) rules, got \(items.count)")
        }
        var rules: [ScheduleRule] = []
        for (index, item) in items.enumerated() {
            rules.append(try parse(item, path: "\(path)[\(index)]", relativeVolume: relativeVolume))
        }
        return rules
    }

    /// Parses one rule object at `path`.
    public static func parse(_ value: JSONValue, path: String, relativeVolume: Bool) throws(ConfigError) -> ScheduleRule {
        var r = try ConfigReader(value, path: path)
        guard let atValue = r.raw("at") else { throw r.fail("at", "missing (expected \"HH:MM\")") }
        guard let atText = atValue.stringValue else { throw r.fail("at", "expected a string \"HH:MM\", got \(atValue.kindDescription)") }
        guard let minute = minuteOfDay(atText) else { throw r.fail("at", "expected \"HH:MM\" (00:00 to 23:59), got \(JSONValue.string(atText).jsonText)") }
        var days = everyDay
        if let daysValue = r.raw("days"), daysValue != .null {
            guard case .array(let names) = daysValue else { throw r.fail("days", "expected an array of day names, got \(daysValue.kindDescription)") }
            guard !names.isEmpty else { throw r.fail("days", "must name at least one day (leave it out for every day)") }
            days = 0
            for (i, name) in names.enumerated() {
                guard let text = name.stringValue else { throw r.fail("days", "expected a string at [\(i)], got \(name.kindDescription)") }
                guard let d = dayNames.firstIndex(of: text) else {
                    throw r.fail("days", "[\(i)] must be one of \(dayNames.joined(separator: ", ")), got \(JSONValue.string(text).jsonText)")
                }
                days |= 1 << UInt8(d)
            }
        }
        guard r.raw("action") != nil else { throw r.fail("action", "missing (expected \"play\" or \"stop\")") }
        let action: Action = try r.choice("action", default: .play)
        var rule = ScheduleRule(minuteOfDay: minute, days: days, action: action)
        let sound = try r.optionalString("soundID", default: nil)
        var level: Double?
        if let raw = r.raw("level"), raw != .null {
            guard let n = raw.numberValue, n.isFinite else { throw r.fail("level", "expected a number in [0, 1] or null, got \(ConfigReader.show(raw))") }
            guard (0...1).contains(n) else { throw r.fail("level", "must be in [0, 1], got \(ConfigReader.show(raw))") }
            if relativeVolume { throw r.fail("level", "volume.mode gpio-step has no level; leave level out") }
            level = VolumeControlState.tidy(n)
        }
        if action == .stop {
            if sound != nil { throw r.fail("soundID", "only a play rule names a sound") }
            if level != nil { throw r.fail("level", "only a play rule sets a level") }
        }
        rule.soundID = sound
        rule.level = level
        rule.fadeSeconds = try r.int("fadeSeconds", default: defaultFadeSeconds, in: 0...maxFadeSeconds)
        rule.enabled = try r.bool("enabled", default: true)
        try r.finish()
        return rule
    }

    /// `HH:MM` (two digits each) as minutes after midnight, or nil.
    static func minuteOfDay(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count == 5, b[2] == UInt8(ascii: ":") else { return nil }
        let digits = [b[0], b[1], b[3], b[4]].map { Int($0) - 48 }
        guard digits.allSatisfy({ (0...9).contains($0) }) else { return nil }
        let h = digits[0] * 10 + digits[1], m = digits[2] * 10 + digits[3]
        guard h < 24, m < 60 else { return nil }
        return h * 60 + m
    }

    /// The normalised list, as published and stored.
    public static func json(_ rules: [ScheduleRule]) -> JSONValue { .array(rules.map(\.json)) }
}

extension ConfigError {
    /// The command error code for this problem when it came over MQTT:
    /// `malformed` for a wrong JSON type or a missing member, else `invalid-value`.
    var commandCode: CommandErrorCode {
        message.hasPrefix("expected a ") || message.hasPrefix("expected an ") || message.hasPrefix("expected true")
            || message.hasPrefix("missing") ? .malformed : .invalidValue
    }
}
