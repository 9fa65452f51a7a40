// SPDX-License-Identifier: Apache-2.0
import Foundation
import SpeakerCore
import SpeakerProtocol
import Testing

/// Home Assistant device discovery as the core builds it.
@Suite struct HomeAssistantDiscoveryTests {
    func components(_ d: HomeAssistantDiscovery) -> [String: JSONValue] {
        guard case .object(let members)? = d.payload?["components"] else { return [:] }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }
    func isRetired(_ v: JSONValue?) -> Bool {
        if case .object(let m)? = v { return m.count == 1 && m[0].key == "platform" } else { return false }
    }

    /// Every active component (more than its `platform`).
    func active(_ c: [String: JSONValue]) -> [String: JSONValue] { c.filter { !isRetired($0.value) } }

    /// The Jinja dict literal `{% set name = {...} %}` in `template`, which
    /// (built from JSON strings) is also a JSON object.
    func jinjaDict(_ name: String, in template: String?) throws -> [String: String] {
        let text = try #require(template)
        let start = try #require(text.range(of: "{% set \(name) = "))
        let end = try #require(text[start.upperBound...].range(of: " %}"))
        guard case .object(let members) = try JSONParser().parse(Array(text[start.upperBound..<end.lowerBound].utf8)) else {
            Issue.record("not an object: \(text)")
            return [:]
        }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value.stringValue ?? "?") })
    }

    @Test func absoluteDeviceGetsAVolumeNumberInPercentAndNoStepButtons() throws {
        var h = Harness()
        let fx = h.send(.mqttConnected(at: h.now))
        let publication = try #require(fx.publications.first { $0.topic == "homeassistant/device/kitchen/config" })
        #expect(publication.retain && publication.qos == 1)
        // Sent first of all: before the state it describes, and before availability = online.
        #expect(fx.topics.first == publication.topic, "\(fx.topics)")
        for suffix in ["device", "catalog", "session", "availability"] {
            #expect(fx.topics.contains("ambient-speaker/kitchen/\(suffix)"), "\(suffix)")
        }
        let d = h.speaker.homeAssistantDiscovery
        let parsed = try JSONParser().parse(publication.payload)
        #expect(parsed == d.payload)
        #expect(parsed["device"]?["identifiers"] == .array([.string("ambient-speaker-kitchen")]))
        #expect(parsed["origin"]?["name"] == .string("ambient-speaker"))
        #expect(parsed["availability_topic"] == .string("ambient-speaker/kitchen/availability"))
        let c = components(d)
        for button in ["play", "pause", "next", "previous", "stop"] {
            #expect(c[button]?["platform"] == .string("button"), "\(button)")
            #expect(c[button]?["command_topic"] == .string("ambient-speaker/kitchen/command"))
        }
        // QoS 1 on every component: Home Assistant ignores the top-level qos for them.
        #expect(active(c).count > 20)
        for (key, component) in active(c) { #expect(component["qos"] == .number(1), "\(key)") }
        let volume = c["volume"]
        #expect(volume?["platform"] == .string("number"))
        #expect(volume?["min"] == .number(0) && volume?["max"] == .number(100) && volume?["step"] == .number(5))
        #expect(volume?["unit_of_measurement"] == .string("%") && volume?["mode"] == .string("slider"))
        #expect(volume?["value_template"] == .string(
            "{{ (value_json.volume.level * 100) | round(3) if value_json.volume is defined and value_json.volume.level is defined else none }}"))
        #expect(isRetired(c["volume_up"]) && isRetired(c["volume_down"]))
        #expect(c["playing"]?["platform"] == .string("binary_sensor"))
        // Rendering the command template as Home Assistant would (value = 35 %) gives the 0–1 contract level.
        let template = try #require(volume?["command_template"]?.stringValue)
        let rendered = template.replacingOccurrences("{{ now().timestamp() }}", "1795953600.5")
            .replacingOccurrences("{{ (value / 100) | round(5) }}", "0.35")
        #expect(try CommandDecoder().decode(Array(rendered.utf8)).get() == CommandEnvelope(id: "ha-1795953600.5", command: .setVolume(level: 0.35)))
    }

    @Test func theVolumeRangeFollowsMaxLevelAndStepInPercent() {
        let c = components(Harness { $0.volume.maxLevel = 0.7; $0.volume.step = 0.02 }.speaker.homeAssistantDiscovery)
        // 0.7 × 100 is 70.00000000000001 in binary floating point: rounded, so the top level is not out of range.
        #expect(c["volume"]?["max"] == .number(70) && c["volume"]?["step"] == .number(2))
    }

    @Test func relativeDeviceGetsStepButtonsAndRetiresTheNumber() throws {
        let h = Harness { $0.volume.mode = .gpioStep }
        let c = components(h.speaker.homeAssistantDiscovery)
        #expect(isRetired(c["volume"]), "no level exists on a step-only device: \(String(describing: c["volume"]))")
        #expect(c["volume_up"]?["platform"] == .string("button") && c["volume_down"]?["platform"] == .string("button"))
        #expect(c["volume_up"]?["qos"] == .number(1))
        let template = try #require(c["volume_up"]?["command_template"]?.stringValue)
        let rendered = template.replacingOccurrences("{{ now().timestamp() }}", "1")
        #expect(try CommandDecoder().decode(Array(rendered.utf8)).get() == CommandEnvelope(id: "ha-1", command: .volumeUp(steps: 1)))
    }

    @Test func everyTemplateOnDeviceOrSessionGuardsTheFieldsItReads() {
        // A relative device's `device` has no volume.level: a template that reads a field a mode lacks
        // must test it first (`is defined`), or Home Assistant logs a template warning on every message.
        let c = components(Harness().speaker.homeAssistantDiscovery)
        for key in ["volume", "audio", "underruns", "sound", "now_playing"] {
            let template = c[key]?["value_template"]?.stringValue ?? ""
            #expect(template.contains("is defined") || template.contains(" in names"), "\(key): \(template)")
            #expect(template.contains("else none"), "\(key): \(template)")
        }
    }

    @Test func theSoundSelectShowsCatalogNamesAndSendsIDs() throws {
        let c = components(Harness().speaker.homeAssistantDiscovery)
        let sound = c["sound"]
        #expect(sound?["options"] == .array(["White noise", "Pink noise", "Brown noise"].map { .string($0) }))
        #expect(sound?["state_topic"] == .string("ambient-speaker/kitchen/session"))
        // State: id → name; command: name → the id as JSON text, placed as the command's soundID.
        #expect(try jinjaDict("names", in: sound?["value_template"]?.stringValue)
                == ["white": "White noise", "pink": "Pink noise", "brown": "Brown noise"])
        let ids = try jinjaDict("ids", in: sound?["command_template"]?.stringValue)
        #expect(ids == ["White noise": #""white""#, "Pink noise": #""pink""#, "Brown noise": #""brown""#])
        let template = try #require(sound?["command_template"]?.stringValue)
        let body = String(try #require(template.range(of: " %}").map { template[$0.upperBound...] }))
        let rendered = body.replacingOccurrences("{{ now().timestamp() }}", "7").replacingOccurrences("{{ ids[value] }}", ids["Pink noise"] ?? "")
        #expect(try CommandDecoder().decode(Array(rendered.utf8)).get() == CommandEnvelope(id: "ha-7", command: .select(soundID: "pink")))
    }

    @Test func duplicateBlankOrNoneNamesBecomeDistinctLabels() {
        let catalog = [
            CatalogEntry(id: "rain", name: "Rain", summary: ""), CatalogEntry(id: "rain-2", name: " Rain ", summary: ""),
            CatalogEntry(id: "surf", name: "Surf", summary: ""), CatalogEntry(id: "blank", name: "  ", summary: ""),
            CatalogEntry(id: "nothing", name: "None", summary: ""), CatalogEntry(id: "q", name: #"Say "hi" \ {{ x }}"#, summary: ""),
        ]
        #expect(HomeAssistantDiscovery.soundLabels(catalog)
                == ["Rain (rain)", "Rain (rain-2)", "Surf", "blank", "nothing", #"Say "hi" \ {{ x }}"#])
        // A name that is literally another entry's "name (id)": the ids, which are unique.
        let clash = [CatalogEntry(id: "a", name: "X", summary: ""), CatalogEntry(id: "b", name: "X", summary: ""),
                     CatalogEntry(id: "c", name: "X (a)", summary: "")]
        #expect(HomeAssistantDiscovery.soundLabels(clash) == ["a", "b", "c"])
        let labels = components(Harness(catalog: catalog).speaker.homeAssistantDiscovery)["sound"]?["options"]
        #expect(labels == .array(HomeAssistantDiscovery.soundLabels(catalog).map { .string($0) }))
    }

    @Test func sensorsForPlaybackNowPlayingAndTheAudioOutput() throws {
        let c = components(Harness().speaker.homeAssistantDiscovery)
        #expect(c["playback"]?["device_class"] == .string("enum"))
        #expect(c["playback"]?["options"] == .array(["playing", "paused", "idle"].map { .string($0) }))
        #expect(c["playback"]?["value_template"]
                == .string("{{ 'idle' if value_json.ended else ('playing' if value_json.isPlaying else 'paused') }}"))
        #expect(c["now_playing"]?["state_topic"] == .string("ambient-speaker/kitchen/session"))
        #expect(try jinjaDict("names", in: c["now_playing"]?["value_template"]?.stringValue)["pink"] == "Pink noise")
        let audio = c["audio"]
        #expect(audio?["device_class"] == .string("enum") && audio?["options"] == .array([.string("ok"), .string("unavailable")]))
        #expect(audio?["entity_category"] == .string("diagnostic") && audio?["state_topic"] == .string("ambient-speaker/kitchen/device"))
        let underruns = c["underruns"]
        #expect(underruns?["entity_category"] == .string("diagnostic") && underruns?["state_class"] == .string("total_increasing"))
        #expect(underruns?["value_template"] == .string("{{ value_json.underruns if value_json.underruns is defined else none }}"))
    }

    @Test func aTriggerForEveryPhysicalGestureWithHomeAssistantsTranslatedNames() {
        let withDouble = components(Harness { $0.inputs.doublePressMs = 250 }.speaker.homeAssistantDiscovery)
        let subtypes = ["playPause": "button_1", "next": "button_2", "previous": "button_3", "encoderSwitch": "button_4"]
        let types = ["press": "button_short_press", "long": "button_long_press", "double": "button_double_press"]
        var pairs = Set<String>()
        for button in TransportButton.allCases {
            for gesture in ["press", "long", "double"] {
                let t = withDouble["\(button.rawValue)_\(gesture)"]
                #expect(t?["platform"] == .string("device_automation"), "\(button) \(gesture)")
                #expect(t?["topic"] == .string("ambient-speaker/kitchen/event"))
                #expect(t?["type"] == .string(types[gesture]!) && t?["subtype"] == .string(subtypes[button.rawValue]!))
                // The trigger's payload is exactly what the speaker publishes for that gesture.
                #expect(t?["payload"]?.stringValue == InputEventPayload.button(name: button.rawValue, gesture: gesture).json.jsonText)
                pairs.insert("\(t?["type"]?.stringValue ?? "") \(t?["subtype"]?.stringValue ?? "")")
            }
        }
        #expect(withDouble["knob_up"]?["type"] == .string("turned up") && withDouble["knob_down"]?["type"] == .string("turned down"))
        #expect(withDouble["knob_up"]?["payload"] == .string("turn") && withDouble["knob_down"]?["subtype"] == .string("Volume knob"))
        #expect(pairs.count == 12, "type + subtype must be unique per device")
        // Without double press, or without the encoder switch, those triggers retire.
        let plain = components(Harness { $0.inputs.encoderSwitch = nil }.speaker.homeAssistantDiscovery)
        #expect(isRetired(plain["playPause_double"]) && isRetired(plain["encoderSwitch_press"]))
        #expect(plain["playPause_long"]?["type"] == .string("button_long_press"))
        // A one-sound catalog has no next/previous.
        let single = components(Harness(catalog: [Harness.catalog[0]]).speaker.homeAssistantDiscovery)
        #expect(isRetired(single["next"]) && isRetired(single["previous"]))
    }

    @Test func disabledDiscoveryPublishesAnEmptyRetainedConfig() throws {
        var h = Harness { $0.mqtt.homeAssistant.enabled = false; $0.mqtt.homeAssistant.prefix = "ha" }
        let fx = h.send(.mqttConnected(at: h.now))
        let removal = try #require(fx.publications.first { $0.topic == "ha/device/kitchen/config" })
        #expect(removal.payload.isEmpty && removal.retain)
        #expect(HomeAssistantDiscovery.statusTopic(h.speaker.config) == "ha/status")
    }

    @Test func aReloadThatChangesWhatDiscoveryDescribesResendsIt() throws {
        var h = Harness()
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        let topic = "homeassistant/device/kitchen/config"
        var new = h.speaker.config
        new.audio.fadeMs = 123
        #expect(!h.send(.reconfigure(new, at: h.now)).topics.contains(topic), "a reload that discovery does not show sends nothing")
        new.device.name = "Bedroom"
        new.volume.maxLevel = 0.8
        let fx = h.send(.reconfigure(new, at: h.now))
        let sent = try #require(fx.publications.first { $0.topic == topic }, "\(fx.topics)")
        #expect(sent.retain && sent.qos == 1)
        let parsed = try JSONParser().parse(sent.payload)
        #expect(parsed["device"]?["name"] == .string("Bedroom"))
        #expect(parsed["components"]?["volume"]?["max"] == .number(80))
        #expect(parsed == h.speaker.homeAssistantDiscovery.payload)
        #expect(fx.lastPublished("device")?["name"] == .string("Bedroom"))
        #expect(fx.topics.firstIndex(of: topic)! < fx.topics.firstIndex(of: "ambient-speaker/kitchen/device")!,
                "discovery before the state that shows the change: \(fx.topics)")
    }

    @Test func aReloadThatSwitchesDiscoveryOffRemovesItAndOnSendsIt() throws {
        var h = Harness()
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        let topic = "homeassistant/device/kitchen/config"
        var new = h.speaker.config
        new.mqtt.homeAssistant.enabled = false
        var fx = h.send(.reconfigure(new, at: h.now))
        let removal = try #require(fx.publications.first { $0.topic == topic }, "\(fx.topics)")
        #expect(removal.payload.isEmpty && removal.retain, "an empty retained config removes the device")
        #expect(fx.publications.filter { $0.topic == topic }.count == 1)
        #expect(h.speaker.config.mqtt.homeAssistant.enabled == false)
        let logs = fx.compactMap { if case .log(_, let m) = $0 { m } else { nil } }
        #expect(logs.contains { $0.contains("applied mqtt.homeAssistant.enabled") }, "\(logs)")
        // Switched on again while the broker is away: nothing now, the full config on the next connect.
        h.send(.mqttDisconnected(at: h.now))
        new.mqtt.homeAssistant.enabled = true
        #expect(!h.send(.reconfigure(new, at: h.now)).topics.contains(topic))
        fx = h.send(.mqttConnected(at: h.now))
        let back = try #require(fx.publications.first { $0.topic == topic })
        #expect(try JSONParser().parse(back.payload)["components"]?["play"]?["platform"] == .string("button"))
        // The prefix names the subscribed status topic: restart-only, kept.
        new.mqtt.homeAssistant.prefix = "ha"
        fx = h.send(.reconfigure(new, at: h.now))
        #expect(h.speaker.homeAssistantDiscovery.topic == topic && !fx.topics.contains { $0.hasPrefix("ha/") })
    }
}

extension String {
    /// Plain substring replacement (no Foundation in this target).
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let range = rest.range(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
