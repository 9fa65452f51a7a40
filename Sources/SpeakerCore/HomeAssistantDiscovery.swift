import SpeakerProtocol

/// Home Assistant MQTT *device-based* discovery for this speaker: one
/// retained config on `{haPrefix}/device/{deviceId}/config` whose
/// `components` give Home Assistant
///
/// - buttons for play, pause, next, previous and stop;
/// - a `select` of the sound (options are catalog ids, state from `session`);
/// - a `binary_sensor` that is on while audio is actually playing;
/// - a volume `number` **only for absolute devices**, bound to
///   `device.volume.level`; a relative (step-only) device gets volume up/down
///   buttons instead, never an invented level;
/// - a `device_automation` trigger for every physical gesture the board can
///   produce (each button's press and long press, double press when enabled,
///   the knob turned either way), matched on the `event` topic.
///
/// Every component id that *could* exist is always listed: one that does not
/// apply to this configuration carries only its `platform`, which is how
/// device discovery tells Home Assistant to remove a retired entity (a speaker
/// switched from software volume to a step-only amp loses its slider). With
/// discovery disabled the publication is an empty retained payload, which
/// removes the device. Buttons send real `command` payloads with a fresh id
/// per press (the speaker de-duplicates ids). Pure value; any thread.
public struct HomeAssistantDiscovery: Equatable, Sendable {
    /// `{haPrefix}/device/{deviceId}/config`.
    public let topic: String
    /// The config, or nil when discovery is disabled (published as an empty payload).
    public let payload: JSONValue?

    /// Builds the discovery config for `config` with this `catalog` and volume kind.
    public init(config: SpeakerConfig, catalog: [CatalogEntry], volume: VolumeState, software: String) {
        let ha = config.mqtt.homeAssistant
        topic = "\(ha.prefix)/device/\(config.device.id)/config"
        guard ha.enabled else {
            payload = nil
            return
        }
        let root = config.topicRoot
        let id = config.device.id
        var components: [(key: String, value: JSONValue)] = []
        func add(_ object: String, _ platform: String, active: Bool, _ members: [(key: String, value: JSONValue)]) {
            guard active else {
                components.append((object, .object([("platform", .string(platform))])))
                return
            }
            var all: [(key: String, value: JSONValue)] = [("platform", .string(platform))]
            if platform != "device_automation" { all.append(("unique_id", .string("ambient-speaker-\(id)-\(object)"))) }
            components.append((object, .object(all + members)))
        }
        /// A command payload template with a fresh id per use (`extra` is raw JSON member text).
        func command(_ action: String, _ extra: String = "") -> JSONValue {
            .string(#"{"id":"ha-{{ now().timestamp() }}","action":"\#(action)""# + extra + "}")
        }
        func button(_ object: String, _ name: String, _ action: String, icon: String, active: Bool = true) {
            add(object, "button", active: active, [
                ("name", .string(name)), ("command_topic", .string("\(root)/command")),
                ("command_template", command(action)), ("icon", .string(icon)),
            ])
        }
        button("play", "Play", "play", icon: "mdi:play")
        button("pause", "Pause", "pause", icon: "mdi:pause")
        button("next", "Next sound", "next", icon: "mdi:skip-next", active: catalog.count > 1)
        button("previous", "Previous sound", "previous", icon: "mdi:skip-previous", active: catalog.count > 1)
        button("stop", "Stop", "stop", icon: "mdi:stop")
        let isAbsolute: Bool
        if case .absolute = volume { isAbsolute = true } else { isAbsolute = false }
        button("volume_up", "Volume up", "volumeUp", icon: "mdi:volume-plus", active: !isAbsolute)
        button("volume_down", "Volume down", "volumeDown", icon: "mdi:volume-minus", active: !isAbsolute)
        add("volume", "number", active: isAbsolute, [
            ("name", .string("Volume")), ("icon", .string("mdi:volume-high")),
            ("state_topic", .string("\(root)/device")), ("value_template", .string("{{ value_json.volume.level }}")),
            ("command_topic", .string("\(root)/command")), ("command_template", command("setVolume", #","level":{{ value }}"#)),
            ("min", .number(0)), ("max", .number(config.volume.maxLevel)), ("step", .number(config.volume.step)),
            ("mode", .string("slider")),
        ])
        add("sound", "select", active: true, [
            ("name", .string("Sound")), ("icon", .string("mdi:waves")),
            ("options", .array(catalog.map { .string($0.id) })),
            ("state_topic", .string("\(root)/session")), ("value_template", .string("{{ value_json.soundID }}")),
            ("command_topic", .string("\(root)/command")), ("command_template", command("select", #","soundID":"{{ value }}""#)),
        ])
        add("playing", "binary_sensor", active: true, [
            ("name", .string("Playing")), ("icon", .string("mdi:speaker-play")),
            ("state_topic", .string("\(root)/session")),
            ("value_template", .string("{{ 'ON' if value_json.isPlaying else 'OFF' }}")),
        ])
        let gestures: [(ButtonGesture, String)] = [(.press, "button_short_press"), (.long, "button_long_press"),
                                                    (.double, "button_double_press")]
        for button in TransportButton.allCases {
            let present = button != .encoderSwitch || config.inputs.encoderSwitch != nil
            for (gesture, type) in gestures {
                let enabled = present && (gesture != .double || config.inputs.doublePressMs > 0)
                let event = InputEventPayload.button(name: button.rawValue, gesture: gesture.rawValue).json.jsonText
                add("\(button.rawValue)_\(gesture.rawValue)", "device_automation", active: enabled, [
                    ("automation_type", .string("trigger")), ("topic", .string("\(root)/event")),
                    ("type", .string(type)), ("subtype", .string(button.rawValue)), ("payload", .string(event)),
                ])
            }
        }
        for (object, sign, type) in [("knob_up", ">", "knob_turned_up"), ("knob_down", "<", "knob_turned_down")] {
            add(object, "device_automation", active: true, [
                ("automation_type", .string("trigger")), ("topic", .string("\(root)/event")),
                ("type", .string(type)), ("subtype", .string("knob")),
                ("value_template", .string("{{ 'turn' if value_json.source == 'knob' and value_json.delta \(sign) 0 else '' }}")),
                ("payload", .string("turn")),
            ])
        }
        payload = .object([
            ("device", .object([
                ("identifiers", .array([.string("ambient-speaker-\(id)")])), ("name", .string(config.device.name)),
                ("manufacturer", .string("ambient-speaker")), ("model", .string("Raspberry Pi ambience speaker")),
                ("sw_version", .string(software)),
            ])),
            ("origin", .object([("name", .string("ambient-speaker")), ("sw_version", .string(software))])),
            ("availability_topic", .string("\(root)/availability")),
            ("payload_available", .string("online")), ("payload_not_available", .string("offline")),
            ("qos", .number(1)),
            ("components", .object(components)),
        ])
    }

    /// The retained QoS 1 publication (empty payload when disabled).
    public var publication: Publication {
        Publication(topic: topic, payload: payload?.serialized() ?? [], qos: 1, retain: true)
    }

    /// Home Assistant's birth/will topic (`{haPrefix}/status`); on `online` the config is sent again.
    public static func statusTopic(_ config: SpeakerConfig) -> String { "\(config.mqtt.homeAssistant.prefix)/status" }
}

extension Speaker {
    /// The discovery config for the running configuration (see `HomeAssistantDiscovery`).
    public var homeAssistantDiscovery: HomeAssistantDiscovery {
        HomeAssistantDiscovery(config: config, catalog: state.catalog, volume: state.volume, software: environment.software)
    }
}
