// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// Home Assistant MQTT *device-based* discovery for this speaker: one
/// retained config on `{haPrefix}/device/{deviceId}/config` whose
/// `components` give Home Assistant
///
/// - buttons for play, pause, next, previous and stop;
/// - a `select` of the sound showing catalog *names* (`soundLabels`), its
///   templates mapping name → id for the command and id → name for the state;
/// - a volume `number` in % (0 … `volume.maxLevel` × 100, step `volume.step`
///   × 100, slider) **only for absolute devices**, bound to
///   `device.volume.level` and sending the contract's 0–1 level; a relative
///   (step-only) device gets volume up/down buttons instead, never an
///   invented level;
/// - a `binary_sensor` on while audio is actually playing, a `Playback` enum
///   sensor (`playing` / `paused` / `idle`), a `Now playing` sensor (the
///   sound's name while it plays), and diagnostic sensors for the audio
///   status (`ok` / `unavailable`) and the underrun count;
/// - the bedside features (`HomeAssistantBedside`): a sleep-timer select,
///   cancel button and end-time sensor, a mute switch, the night cap's
///   switch and level (absolute devices only), a switch per schedule rule
///   and the next rule's time;
/// - a `device_automation` trigger for every physical gesture the board can
///   produce, with the trigger types and subtypes Home Assistant translates
///   (`HomeAssistantTriggers`), and one for the sleep timer running out,
///   matched on the `event` topic.
///
/// Every active component carries `"qos": 1` itself: Home Assistant does not
/// apply the message's top-level `qos` to the components, and a command sent
/// at QoS 0 while the speaker is briefly away would be lost although the
/// speaker keeps its session for exactly that case.
///
/// Every value template tolerates a payload that lacks its field (a
/// `device` with `"control":"relative"` has no `level`): it renders `None`,
/// which Home Assistant takes as "unknown", instead of failing with a
/// template warning.
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
    public init(config: SpeakerConfig, catalog: [CatalogEntry], volume: VolumeState, software: String,
                bedside: HomeAssistantBedside = HomeAssistantBedside()) {
        let ha = config.mqtt.homeAssistant
        topic = "\(ha.prefix)/device/\(config.device.id)/config"
        guard ha.enabled else {
            payload = nil
            return
        }
        var builder = ComponentBuilder(root: config.topicRoot, deviceID: config.device.id)
        builder.transportButtons(catalogSize: catalog.count)
        builder.volume(volume, config: config.volume)
        builder.soundAndPlayback(catalog: catalog)
        builder.bedside(bedside, volume: config.volume)
        builder.diagnostics()
        HomeAssistantTriggers.add(to: &builder, inputs: config.inputs)
        let topics = SpeakerTopics(root: config.topicRoot)
        let id = config.device.id
        payload = .object([
            ("device", .object([
                ("identifiers", .array([.string("ambient-speaker-\(id)")])), ("name", .string(config.device.name)),
                ("manufacturer", .string("ambient-speaker")), ("model", .string("Raspberry Pi ambience speaker")),
                ("sw_version", .string(software)),
            ])),
            ("origin", .object([("name", .string("ambient-speaker")), ("sw_version", .string(software))])),
            ("availability_topic", .string(topics.availability)),
            ("payload_available", .string("online")), ("payload_not_available", .string("offline")),
            ("qos", .number(1)),
            ("components", .object(builder.components)),
        ])
    }

    /// The retained QoS 1 publication (empty payload when disabled).
    public var publication: Publication {
        Publication(topic: topic, payload: payload?.serialized() ?? [], qos: 1, retain: true)
    }

    /// Home Assistant's birth/will topic (`{haPrefix}/status`); on `online` the config is sent again.
    public static func statusTopic(_ config: SpeakerConfig) -> String { "\(config.mqtt.homeAssistant.prefix)/status" }

    /// The label Home Assistant shows for each catalog entry, in catalog
    /// order, all distinct: the entry's name (trimmed); a name shared by
    /// several entries becomes `name (id)` for each of them; an empty name, or
    /// one Home Assistant would read as "no value" (`None`), becomes the id.
    /// Should the labels still collide (a name that is literally another
    /// entry's `name (id)`), every label is the id, which is unique.
    public static func soundLabels(_ catalog: [CatalogEntry]) -> [String] {
        let trimmed = catalog.map { entry -> String in
            let name = entry.name.trimmingWhitespace
            return name.isEmpty || name.lowercased() == "none" ? entry.id : name
        }
        var counts: [String: Int] = [:]
        for label in trimmed { counts[label, default: 0] += 1 }
        let labels = zip(trimmed, catalog).map { label, entry in counts[label, default: 0] > 1 ? "\(label) (\(entry.id))" : label }
        return Set(labels).count == labels.count ? labels : catalog.map(\.id)
    }
}

/// Collects the `components` of the discovery message (see `HomeAssistantDiscovery`).
struct ComponentBuilder {
    let topics: SpeakerTopics
    let deviceID: String
    private(set) var components: [(key: String, value: JSONValue)] = []

    init(root: String, deviceID: String) {
        topics = SpeakerTopics(root: root)
        self.deviceID = deviceID
    }

    /// An active component (with `unique_id` except for triggers, and QoS 1),
    /// or a retired one: only its `platform`, which removes it.
    mutating func add(_ object: String, _ platform: String, active: Bool, _ members: [(key: String, value: JSONValue)]) {
        guard active else {
            components.append((object, .object([("platform", .string(platform))])))
            return
        }
        var all: [(key: String, value: JSONValue)] = [("platform", .string(platform))]
        if platform != "device_automation" { all.append(("unique_id", .string("ambient-speaker-\(deviceID)-\(object)"))) }
        components.append((object, .object(all + members + [("qos", .number(1))])))
    }

    /// A command payload template with a fresh id per use (`extra` is raw JSON member text).
    func command(_ action: String, _ extra: String = "") -> JSONValue {
        .string(#"{"id":"ha-{{ now().timestamp() }}","action":"\#(action)""# + extra + "}")
    }

    mutating func button(_ object: String, _ name: String, _ action: String, icon: String, active: Bool = true) {
        add(object, "button", active: active, [
            ("name", .string(name)), ("command_topic", .string(topics.command)),
            ("command_template", command(action)), ("icon", .string(icon)),
        ])
    }

    mutating func transportButtons(catalogSize: Int) {
        button("play", "Play", "play", icon: "mdi:play")
        button("pause", "Pause", "pause", icon: "mdi:pause")
        button("next", "Next sound", "next", icon: "mdi:skip-next", active: catalogSize > 1)
        button("previous", "Previous sound", "previous", icon: "mdi:skip-previous", active: catalogSize > 1)
        button("stop", "Stop", "stop", icon: "mdi:stop")
    }

    /// The % number for an absolute device, the step buttons for a relative one.
    mutating func volume(_ volume: VolumeState, config: VolumeSection) {
        let isAbsolute: Bool
        if case .absolute = volume { isAbsolute = true } else { isAbsolute = false }
        button("volume_up", "Volume up", "volumeUp", icon: "mdi:volume-plus", active: !isAbsolute)
        button("volume_down", "Volume down", "volumeDown", icon: "mdi:volume-minus", active: !isAbsolute)
        let level = "value_json.volume.level"
        add("volume", "number", active: isAbsolute, [
            ("name", .string("Volume")), ("icon", .string("mdi:volume-high")),
            ("state_topic", .string(topics.device)),
            ("value_template", .string("{{ (\(level) * 100) | round(3) if value_json.volume is defined and \(level) is defined else none }}")),
            ("command_topic", .string(topics.command)),
            ("command_template", command("setVolume", #","level":{{ (value / 100) | round(5) }}"#)),
            ("min", .number(0)), ("max", .number(Self.percent(config.maxLevel))),
            ("step", .number(max(0.001, Self.percent(config.step)))),
            ("unit_of_measurement", .string("%")), ("mode", .string("slider")),
        ])
    }

    /// A 0–1 level as a percentage rounded to 3 decimals, as the state
    /// template rounds it (so the maximum level is never above `max`).
    static func percent(_ level: Double) -> Double { (level * 100_000).rounded() / 1000 }

    mutating func soundAndPlayback(catalog: [CatalogEntry]) {
        let labels = HomeAssistantDiscovery.soundLabels(catalog)
        let namesByID = Self.jinjaDict(zip(catalog, labels).map { ($0.id, $1) })
        let idsByName = Self.jinjaDict(zip(catalog, labels).map { ($1, JSONValue.string($0.id).jsonText) })
        add("sound", "select", active: true, [
            ("name", .string("Sound")), ("icon", .string("mdi:waves")),
            ("options", .array(labels.map { .string($0) })),
            ("state_topic", .string(topics.session)),
            ("value_template", .string("{% set names = \(namesByID) %}"
                                       + "{{ names[value_json.soundID] if value_json.soundID in names else none }}")),
            ("command_topic", .string(topics.command)),
            ("command_template", .string("{% set ids = \(idsByName) %}" + command("select", #","soundID":{{ ids[value] }}"#).stringValue!)),
        ])
        add("playing", "binary_sensor", active: true, [
            ("name", .string("Playing")), ("icon", .string("mdi:speaker-play")),
            ("state_topic", .string(topics.session)),
            ("value_template", .string("{{ 'ON' if value_json.isPlaying else 'OFF' }}")),
        ])
        add("playback", "sensor", active: true, [
            ("name", .string("Playback")), ("icon", .string("mdi:play-pause")),
            ("device_class", .string("enum")), ("options", .array(["playing", "paused", "idle"].map { .string($0) })),
            ("state_topic", .string(topics.session)),
            ("value_template", .string("{{ 'idle' if value_json.ended else ('playing' if value_json.isPlaying else 'paused') }}")),
        ])
        add("now_playing", "sensor", active: true, [
            ("name", .string("Now playing")), ("icon", .string("mdi:music-note")),
            ("state_topic", .string(topics.session)),
            ("value_template", .string("{% set names = \(namesByID) %}{{ names[value_json.soundID] "
                                       + "if value_json.isPlaying and value_json.soundID in names else none }}")),
        ])
    }

    mutating func diagnostics() {
        add("audio", "sensor", active: true, [
            ("name", .string("Audio output")), ("icon", .string("mdi:speaker")),
            ("device_class", .string("enum")), ("options", .array([.string("ok"), .string("unavailable")])),
            ("entity_category", .string("diagnostic")),
            ("state_topic", .string(topics.device)),
            ("value_template", .string("{{ value_json.audio if value_json.audio is defined else none }}")),
        ])
        add("underruns", "sensor", active: true, [
            ("name", .string("Audio underruns")), ("icon", .string("mdi:waveform")),
            ("state_class", .string("total_increasing")), ("entity_category", .string("diagnostic")),
            ("state_topic", .string(topics.device)),
            ("value_template", .string("{{ value_json.underruns if value_json.underruns is defined else none }}")),
        ])
    }

    /// A Jinja dict literal of string keys and values. JSON string escapes
    /// (`\"`, `\\`, `\n`, `\u00XX`) are valid Jinja string-literal escapes.
    static func jinjaDict(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(JSONValue.string($0.0).jsonText): \(JSONValue.string($0.1).jsonText)" }.joined(separator: ", ") + "}"
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks (no Foundation in this target).
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
