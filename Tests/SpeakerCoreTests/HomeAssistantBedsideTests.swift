// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

/// The bedside components of Home Assistant discovery: sleep timer, mute,
/// night cap, schedule rules and the sleep timer's device trigger.
@Suite struct HomeAssistantBedsideTests {
    let base = HomeAssistantDiscoveryTests()

    func discovery(_ bedside: HomeAssistantBedside = HomeAssistantBedside(),
                   configure: (inout SpeakerConfig) -> Void = { _ in }) -> [String: JSONValue] {
        let h = Harness(configure: configure)
        return base.components(HomeAssistantDiscovery(config: h.speaker.config, catalog: Harness.catalog,
                                                      volume: h.speaker.state.volume.level, software: "test",
                                                      bedside: bedside))
    }

    /// A command template rendered as Home Assistant would, with `value` and a fixed `now()`, parsed.
    func rendered(_ template: String?, _ replacements: [(String, String)]) throws -> JSONValue {
        var text = try #require(template).replacingOccurrences("{{ now().timestamp() }}", "5")
        for (from, to) in replacements { text = text.replacingOccurrences(from, to) }
        return try JSONParser().parse(Array(text.utf8))
    }

    /// The text between the first `start` and the next `end` in `text`.
    func between(_ text: String, _ start: String, _ end: String) throws -> String {
        let from = try #require(text.range(of: start))
        let to = try #require(text[from.upperBound...].range(of: end))
        return String(text[from.upperBound..<to.lowerBound])
    }

    @Test func theSleepTimerSelectOffersOffAndFiveDurationsAndSendsTheTimerCommands() throws {
        let c = discovery()
        let select = c["sleep_timer"]
        #expect(select?["platform"] == .string("select") && select?["qos"] == .number(1))
        #expect(select?["options"] == .array(["Off", "15 min", "30 min", "60 min", "90 min", "120 min"].map { .string($0) }))
        #expect(select?["state_topic"] == .string("ambient-speaker/kitchen/session"))
        let template = try #require(select?["command_template"]?.stringValue)
        // The template's two branches, each a command with a fresh id.
        let set = try between(template, "{% if value in minutes %}", "{% else %}")
        #expect(try rendered(set, [("{{ minutes[value] }}", "30")])
                == .object([("id", .string("ha-5")), ("action", .string("setSleepTimer")), ("minutes", .number(30))]))
        #expect(try rendered(between(template, "{% else %}", "{% endif %}"), [])
                == .object([("id", .string("ha-5")), ("action", .string("cancelSleepTimer"))]))
        #expect(try base.jinjaDict("minutes", in: template).keys.sorted() == ["120 min", "15 min", "30 min", "60 min", "90 min"])
        #expect(c["sleep_timer_cancel"]?["platform"] == .string("button"))
        #expect(try rendered(c["sleep_timer_cancel"]?["command_template"]?.stringValue, [])["action"] == .string("cancelSleepTimer"))
        let ends = c["sleep_timer_ends"]
        #expect(ends?["device_class"] == .string("timestamp") && ends?["state_topic"] == .string("ambient-speaker/kitchen/session"))
        #expect(ends?["value_template"]?.stringValue?.hasSuffix("{{ t.endsAt if t and t.endsAt is defined else none }}") == true)
    }

    @Test func muteIsASwitchOnDeviceMuted() throws {
        let mute = discovery()["mute"]
        #expect(mute?["platform"] == .string("switch") && mute?["state_topic"] == .string("ambient-speaker/kitchen/device"))
        #expect(mute?["value_template"]
                == .string("{{ none if value_json.muted is not defined else ('ON' if value_json.muted else 'OFF') }}"))
        let template = mute?["command_template"]?.stringValue
        #expect(try rendered(template, [("{{ 'mute' if value == 'ON' else 'unmute' }}", "mute")])["action"] == .string("mute"))
        // Software silence in every mode: a step-only device has the switch too.
        let stepOnly = base.components(Harness { $0.volume.mode = .gpioStep }.speaker.homeAssistantDiscovery)
        #expect(stepOnly["mute"]?["platform"] == .string("switch") && !base.isRetired(stepOnly["mute"]))
    }

    @Test func theNightCapSwitchAndLevelAreForAbsoluteDevicesOnly() throws {
        let cap = HomeAssistantBedside.NightCap(from: "21:30", to: "06:45", maxLevel: 0.25)
        let c = discovery(HomeAssistantBedside(nightCap: cap)) { $0.volume.maxLevel = 0.8 }
        let template = try #require(c["night_cap"]?["command_template"]?.stringValue)
        #expect(try rendered(between(template, "{% if value == 'ON' %}", "{% else %}"), [])["nightCap"]
                == .object([("from", .string("21:30")), ("to", .string("06:45")), ("maxLevel", .number(0.25))]))
        #expect(template.contains(#""action":"setNightCap","nightCap":null}"#))
        let level = c["night_cap_level"]
        #expect(level?["max"] == .number(80) && level?["unit_of_measurement"] == .string("%"))
        #expect(try rendered(level?["command_template"]?.stringValue, [("{{ (value / 100) | round(5) }}", "0.2")])["nightCap"]
                == .object([("from", .string("21:30")), ("to", .string("06:45")), ("maxLevel", .number(0.2))]))
        let relative = discovery(HomeAssistantBedside(nightCapAvailable: false))
        #expect(base.isRetired(relative["night_cap"]) && base.isRetired(relative["night_cap_level"]))
        // The speaker itself: a step-only device has no cap to offer.
        let stepOnly = base.components(Harness { $0.volume.mode = .gpioStep }.speaker.homeAssistantDiscovery)
        #expect(base.isRetired(stepOnly["night_cap"]) && base.isRetired(stepOnly["night_cap_level"]))
        #expect(HomeAssistantBedside.fallbackNightCap(maxLevel: 0.2).maxLevel == 0.2)
    }

    @Test func sixteenScheduleSwitchesAreAlwaysListedAndOnlyExistingRulesAreActive() throws {
        let c = discovery(HomeAssistantBedside(scheduleCount: 3))
        for number in 1...16 {
            let rule = c["schedule_\(number)"]
            #expect(rule?["platform"] == .string("switch"), "schedule_\(number)")
            #expect(base.isRetired(rule) == (number > 3), "schedule_\(number)")
        }
        #expect(c["schedule_17"] == nil)
        let third = c["schedule_3"]
        #expect(third?["name"] == .string("Schedule 3") && third?["state_topic"] == .string("ambient-speaker/kitchen/schedules"))
        #expect(third?["value_template"]?.stringValue?.contains("value_json.rules | length > 2") == true)
        let command = try rendered(third?["command_template"]?.stringValue, [("{{ 'true' if value == 'ON' else 'false' }}", "false")])
        #expect(command == .object([("id", .string("ha-5")), ("action", .string("setScheduleEnabled")),
                                    ("index", .number(2)), ("enabled", .bool(false))]))
        #expect(c["next_schedule"]?["device_class"] == .string("timestamp"))
        // None on the speaker before any rule exists: all sixteen retired.
        let none = base.components(Harness().speaker.homeAssistantDiscovery)
        #expect((1...16).allSatisfy { base.isRetired(none["schedule_\($0)"]) })
    }

    @Test func theSleepTimerEndingIsADeviceTrigger() {
        let t = discovery()["sleep_timer_ended"]
        #expect(t?["platform"] == .string("device_automation") && t?["topic"] == .string("ambient-speaker/kitchen/event"))
        #expect(t?["type"] == .string("sleep_timer_ended") && t?["subtype"] == .string("Sleep timer"))
        #expect(t?["payload"] == .string(#"{"source":"sleepTimer","name":"ended"}"#))
    }

    @Test func everyBedsideTemplateGuardsWhatItReads() {
        let c = discovery(HomeAssistantBedside(scheduleCount: 16))
        let keys = ["sleep_timer", "sleep_timer_ends", "mute", "night_cap", "night_cap_level", "next_schedule"]
            + (1...16).map { "schedule_\($0)" }
        for key in keys {
            for field in ["value_template", "json_attributes_template"] {
                guard let template = c[key]?[field]?.stringValue else { continue }
                #expect(template.contains("is defined") || template.contains("is not defined"), "\(key).\(field)")
                #expect(template.contains("none") || template.contains("'{}'"), "\(key).\(field)")
            }
            #expect(c[key]?["qos"] == .number(1), "\(key)")
        }
    }
}
