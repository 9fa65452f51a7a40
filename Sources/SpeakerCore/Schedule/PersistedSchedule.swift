// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The schedule's part of the state file: the rules and the night cap set
/// over MQTT, each with the config value it was set over (so the config
/// file wins again once its value changes), and the wall time through which
/// rules have fired (so a restart fires none twice). Members of the state
/// file's object: `"schedules": {"rules": […], "over": […]}`,
/// `"nightCap": {"value": cap|null, "over": cap|null}`, `"scheduleFiredThrough": seconds`.
public struct PersistedSchedule: Equatable, Sendable {
    public var rules: ConfigOverride<[ScheduleRule]>?
    public var nightCap: ConfigOverride<NightCap?>?
    /// Unix seconds (`ScheduleState.firedThrough`).
    public var firedThrough: Int64?

    public init(rules: ConfigOverride<[ScheduleRule]>? = nil, nightCap: ConfigOverride<NightCap?>? = nil, firedThrough: Int64? = nil) {
        self.rules = rules
        self.nightCap = nightCap
        self.firedThrough = firedThrough
    }

    static let keys: Set<String> = ["schedules", "nightCap", "scheduleFiredThrough"]

    var members: [(key: String, value: JSONValue)] {
        var out: [(key: String, value: JSONValue)] = []
        if let rules {
            out.append(("schedules", .object([("rules", ScheduleRule.json(rules.value)), ("over", ScheduleRule.json(rules.over))])))
        }
        if let nightCap {
            out.append(("nightCap", .object([("value", nightCap.value?.json(active: nil) ?? .null),
                                             ("over", nightCap.over?.json(active: nil) ?? .null)])))
        }
        if let firedThrough { out.append(("scheduleFiredThrough", .number(Double(firedThrough)))) }
        return out
    }

    /// Reads the members from a state file's object, validated with the
    /// config's own parsers (a stored rule the parser refuses is an error).
    static func decode(_ value: JSONValue) throws(PersistedState.DecodeError) -> PersistedSchedule {
        var out = PersistedSchedule()
        do throws(ConfigError) {
            if let raw = value["schedules"] {
                guard let rules = raw["rules"], let over = raw["over"] else { throw ConfigError(path: "schedules", message: "needs rules and over") }
                out.rules = ConfigOverride(value: try ScheduleRule.parseList(rules, path: "schedules.rules", relativeVolume: false),
                                           over: try ScheduleRule.parseList(over, path: "schedules.over", relativeVolume: false))
            }
            if let raw = value["nightCap"] {
                guard let cap = raw["value"], let over = raw["over"] else { throw ConfigError(path: "nightCap", message: "needs value and over") }
                out.nightCap = ConfigOverride(value: try NightCap.parse(cap, path: "nightCap.value", volumeMaxLevel: 1, relativeVolume: false),
                                              over: try NightCap.parse(over, path: "nightCap.over", volumeMaxLevel: 1, relativeVolume: false))
            }
        } catch {
            throw PersistedState.DecodeError(reason: error.description)
        }
        if let raw = value["scheduleFiredThrough"] {
            guard let n = raw.numberValue, n.isFinite, n == n.rounded(), abs(n) < 1e15 else {
                throw PersistedState.DecodeError(reason: "scheduleFiredThrough must be whole seconds, got \(raw.jsonText)")
            }
            out.firedThrough = Int64(n)
        }
        return out
    }
}
