// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What Home Assistant discovery shows of the bedside features — sleep
/// timer, mute, night cap and schedules — as the core holds them now.
/// `Speaker` builds it from its children's state; when it changes (a
/// `setSchedules` that adds a rule, a `setNightCap` that moves the window)
/// the discovery config is re-sent, so Home Assistant gains or retires the
/// matching entities. Pure value; any thread.
public struct HomeAssistantBedside: Equatable, Sendable {
    /// The night cap the switch turns on and the max-level number edits.
    public struct NightCap: Equatable, Sendable {
        public var from: String
        public var to: String
        public var maxLevel: Double

        public init(from: String, to: String, maxLevel: Double) {
            self.from = from
            self.to = to
            self.maxLevel = maxLevel
        }
    }

    /// How many schedule rules exist; the first `maxScheduleSwitches` get a switch.
    public var scheduleCount: Int
    /// Whether a night cap applies (an absolute device: a step-only amp has no level to cap).
    public var nightCapAvailable: Bool
    /// The cap in force, else the configured `volume.night`, else `fallbackNightCap`:
    /// what the switch sends when turned on, and the window the number keeps.
    public var nightCap: NightCap

    /// A schedule holds at most 16 rules (contract), so 16 switch ids are always listed.
    public static let maxScheduleSwitches = 16
    /// The durations the sleep-timer select offers, in minutes (besides `Off`).
    public static let sleepTimerMinutes = [15, 30, 60, 90, 120]

    /// 22:00–07:00 at 30 % (at most `volume.maxLevel`): a cap to start from
    /// when neither the speaker nor its config has one.
    public static func fallbackNightCap(maxLevel: Double) -> NightCap {
        NightCap(from: "22:00", to: "07:00", maxLevel: min(0.3, maxLevel))
    }

    public init(scheduleCount: Int = 0, nightCapAvailable: Bool = true,
                nightCap: NightCap = HomeAssistantBedside.fallbackNightCap(maxLevel: 1)) {
        self.scheduleCount = scheduleCount
        self.nightCapAvailable = nightCapAvailable
        self.nightCap = nightCap
    }

    /// The select's label for a duration.
    static func label(minutes: Int) -> String { "\(minutes) min" }
}

extension ComponentBuilder {
    /// The sleep timer (select, cancel button, end-time sensor), mute, the
    /// night cap, one switch per schedule rule and the next rule's time.
    mutating func bedside(_ bedside: HomeAssistantBedside, volume: VolumeSection) {
        sleepTimer()
        // Mute is software silence of the stream in every volume mode: always offered.
        add("mute", "switch", active: true, [
            ("name", .string("Mute")), ("icon", .string("mdi:volume-off")),
            ("state_topic", .string(topics.device)),
            ("value_template", .string("{{ none if value_json.muted is not defined else ('ON' if value_json.muted else 'OFF') }}")),
            ("command_topic", .string(topics.command)),
            ("command_template", command("{{ 'mute' if value == 'ON' else 'unmute' }}")),
        ])
        nightCap(bedside, volume: volume)
        schedules(count: bedside.scheduleCount)
    }

    /// `Off` cancels, a duration (re)starts the timer; the state is the
    /// running timer's duration when it is one of the options, `Off` with no
    /// timer, unknown for another duration (set over MQTT).
    private mutating func sleepTimer() {
        let minutes = HomeAssistantBedside.sleepTimerMinutes
        let options = ["Off"] + minutes.map(HomeAssistantBedside.label)
        let byLabel = "{" + minutes.map { "\(JSONValue.string(HomeAssistantBedside.label(minutes: $0)).jsonText): \($0)" }
            .joined(separator: ", ") + "}"
        let timer = "{% set t = value_json.sleepTimer if value_json.sleepTimer is defined else none %}"
        let set = command("setSleepTimer", #","minutes":{{ minutes[value] }}"#).stringValue ?? ""
        let cancel = command("cancelSleepTimer").stringValue ?? ""
        add("sleep_timer", "select", active: true, [
            ("name", .string("Sleep timer")), ("icon", .string("mdi:timer-sand")),
            ("options", .array(options.map { .string($0) })),
            ("state_topic", .string(topics.session)),
            ("value_template", .string(timer + "{{ 'Off' if not t else ((t.minutes ~ ' min') if t.minutes is defined "
                                       + "and t.minutes in \(minutes) else none) }}")),
            ("command_topic", .string(topics.command)),
            ("command_template", .string("{% set minutes = \(byLabel) %}{% if value in minutes %}\(set){% else %}\(cancel){% endif %}")),
        ])
        button("sleep_timer_cancel", "Cancel sleep timer", "cancelSleepTimer", icon: "mdi:timer-off")
        add("sleep_timer_ends", "sensor", active: true, [
            ("name", .string("Sleep timer ends")), ("icon", .string("mdi:timer-sand")),
            ("device_class", .string("timestamp")),
            ("state_topic", .string(topics.session)),
            ("value_template", .string(timer + "{{ t.endsAt if t and t.endsAt is defined else none }}")),
            ("json_attributes_topic", .string(topics.session)),
            ("json_attributes_template", .string(timer + "{{ t | tojson if t else '{}' }}")),
        ])
    }

    /// On: the remembered window and level; off: `null`. The number (in %,
    /// like the volume) sets the level and keeps the window. Absolute devices only.
    private mutating func nightCap(_ bedside: HomeAssistantBedside, volume: VolumeSection) {
        let cap = bedside.nightCap
        let window = #""from":\#(JSONValue.string(cap.from).jsonText),"to":\#(JSONValue.string(cap.to).jsonText)"#
        let on = command("setNightCap", #","nightCap":{\#(window),"maxLevel":\#(JSONValue.number(cap.maxLevel).jsonText)}"#)
        let off = command("setNightCap", #","nightCap":null"#)
        let state = "{% set c = value_json.nightCap if value_json.nightCap is defined else none %}"
        add("night_cap", "switch", active: bedside.nightCapAvailable, [
            ("name", .string("Night cap")), ("icon", .string("mdi:weather-night")),
            ("state_topic", .string(topics.device)),
            ("value_template", .string("{{ none if value_json.nightCap is not defined else ('ON' if value_json.nightCap else 'OFF') }}")),
            ("json_attributes_topic", .string(topics.device)),
            ("json_attributes_template", .string(state + "{{ c | tojson if c else '{}' }}")),
            ("command_topic", .string(topics.command)),
            ("command_template", .string("{% if value == 'ON' %}\(on.stringValue ?? ""){% else %}\(off.stringValue ?? ""){% endif %}")),
        ])
        add("night_cap_level", "number", active: bedside.nightCapAvailable, [
            ("name", .string("Night cap level")), ("icon", .string("mdi:volume-low")),
            ("state_topic", .string(topics.device)),
            ("value_template", .string(state + "{{ (c.maxLevel * 100) | round(3) if c and c.maxLevel is defined else none }}")),
            ("command_topic", .string(topics.command)),
            ("command_template", command("setNightCap", #","nightCap":{\#(window),"maxLevel":{{ (value / 100) | round(5) }}}"#)),
            ("min", .number(0)), ("max", .number(Self.percent(volume.maxLevel))),
            ("step", .number(max(0.001, Self.percent(volume.step)))),
            ("unit_of_measurement", .string("%")), ("mode", .string("slider")),
        ])
    }

    /// `schedule_1` … `schedule_16`: rule N's `enabled` (state and
    /// `setScheduleEnabled` with index N − 1), the rule itself as attributes;
    /// retired when rule N does not exist. `next_schedule`: when the next rule fires.
    private mutating func schedules(count: Int) {
        let topic = JSONValue.string(topics.schedules)
        for number in 1...HomeAssistantBedside.maxScheduleSwitches {
            let index = number - 1
            let rule = "{% set r = value_json.rules[\(index)] if value_json.rules is defined and value_json.rules "
                + "is sequence and value_json.rules | length > \(index) else none %}"
            add("schedule_\(number)", "switch", active: index < count, [
                ("name", .string("Schedule \(number)")), ("icon", .string("mdi:calendar-clock")),
                ("state_topic", topic),
                ("value_template", .string(rule + "{{ none if r is none or r.enabled is not defined else ('ON' if r.enabled else 'OFF') }}")),
                ("json_attributes_topic", topic),
                ("json_attributes_template", .string(rule + "{{ r | tojson if r else '{}' }}")),
                ("command_topic", .string(topics.command)),
                ("command_template", command("setScheduleEnabled",
                                             #","index":\#(index),"enabled":{{ 'true' if value == 'ON' else 'false' }}"#)),
            ])
        }
        add("next_schedule", "sensor", active: true, [
            ("name", .string("Next schedule")), ("icon", .string("mdi:calendar-arrow-right")),
            ("device_class", .string("timestamp")),
            ("state_topic", topic),
            ("value_template", .string("{% set n = value_json.next if value_json.next is defined else none %}"
                                       + "{{ n.at if n and n.at is defined else none }}")),
        ])
    }
}
