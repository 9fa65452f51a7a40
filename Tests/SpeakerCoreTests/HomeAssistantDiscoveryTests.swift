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

    @Test func absoluteDeviceGetsAVolumeNumberAndNoStepButtons() throws {
        var h = Harness()
        let fx = h.send(.mqttConnected(at: h.now))
        let publication = try #require(fx.publications.first { $0.topic == "homeassistant/device/kitchen/config" })
        #expect(publication.retain && publication.qos == 1)
        // Sent after the state and before availability = online.
        #expect(fx.topics.firstIndex(of: publication.topic)! < fx.topics.firstIndex(of: "ambient-speaker/kitchen/availability")!)
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
        let volume = c["volume"]
        #expect(volume?["platform"] == .string("number"))
        #expect(volume?["max"] == .number(1) && volume?["step"] == .number(0.05))
        #expect(volume?["value_template"] == .string("{{ value_json.volume.level }}"))
        #expect(isRetired(c["volume_up"]) && isRetired(c["volume_down"]))
        #expect(c["sound"]?["options"] == .array(Harness.catalog.map { .string($0.id) }))
        #expect(c["playing"]?["platform"] == .string("binary_sensor"))
        // Rendering the command template as Home Assistant would gives a valid command.
        let template = try #require(c["volume"]?["command_template"]?.stringValue)
        let rendered = template.replacingOccurrences("{{ now().timestamp() }}", "1795953600.5")
            .replacingOccurrences("{{ value }}", "0.35")
        #expect(try CommandDecoder().decode(Array(rendered.utf8)).get() == CommandEnvelope(id: "ha-1795953600.5", command: .setVolume(level: 0.35)))
    }

    @Test func relativeDeviceGetsStepButtonsAndRetiresTheNumber() throws {
        let h = Harness { $0.volume.mode = .gpioStep }
        let c = components(h.speaker.homeAssistantDiscovery)
        #expect(isRetired(c["volume"]), "no level exists on a step-only device: \(String(describing: c["volume"]))")
        #expect(c["volume_up"]?["platform"] == .string("button") && c["volume_down"]?["platform"] == .string("button"))
        let template = try #require(c["volume_up"]?["command_template"]?.stringValue)
        let rendered = template.replacingOccurrences("{{ now().timestamp() }}", "1")
        #expect(try CommandDecoder().decode(Array(rendered.utf8)).get() == CommandEnvelope(id: "ha-1", command: .volumeUp(steps: 1)))
    }

    @Test func aTriggerForEveryPhysicalGesture() {
        let withDouble = components(Harness { $0.inputs.doublePressMs = 250 }.speaker.homeAssistantDiscovery)
        for button in TransportButton.allCases {
            for gesture in ["press", "long", "double"] {
                let t = withDouble["\(button.rawValue)_\(gesture)"]
                #expect(t?["platform"] == .string("device_automation"), "\(button) \(gesture)")
                #expect(t?["topic"] == .string("ambient-speaker/kitchen/event"))
                // The trigger's payload is exactly what the speaker publishes for that gesture.
                #expect(t?["payload"]?.stringValue == InputEventPayload.button(name: button.rawValue, gesture: gesture).json.jsonText)
            }
        }
        #expect(withDouble["knob_up"]?["payload"] == .string("turn") && withDouble["knob_down"]?["subtype"] == .string("knob"))
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
        #expect(parsed["components"]?["volume"]?["max"] == .number(0.8))
        #expect(parsed == h.speaker.homeAssistantDiscovery.payload)
        #expect(fx.lastPublished("device")?["name"] == .string("Bedroom"))
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
