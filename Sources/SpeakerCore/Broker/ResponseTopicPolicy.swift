// SPDX-License-Identifier: Apache-2.0
/// Which MQTT v5 Response Topics the speaker answers on. Anyone who can
/// publish to `command` can name one, and the speaker publishes there under
/// its own identity (and broker ACL), so it answers only where a reply cannot
/// be mistaken for anything else:
/// - a valid topic name: 1–256 bytes, no wildcard (`+`, `#`), no NUL;
/// - not a `$` topic (the broker's own: `$SYS`, `$share`, …);
/// - not in the speakers' namespace `{prefix}/…` — its own `session`,
///   `availability`, `device`, `command` (a reply there would be taken as a
///   command), nor another speaker's;
/// - not in Home Assistant's discovery namespace `{homeAssistant.prefix}/…`.
/// A command with any other response topic is rejected (`malformed`, on
/// `command/result` only) and nothing is applied. Pure; any thread.
struct ResponseTopicPolicy: Sendable {
    /// `mqtt.prefix`, e.g. `ambient-speaker`.
    var speakerPrefix: String
    /// `mqtt.homeAssistant.prefix`, e.g. `homeassistant`.
    var discoveryPrefix: String

    /// Longest response topic accepted, in UTF-8 bytes.
    static let maxBytes = 256

    init(config: SpeakerConfig) {
        speakerPrefix = config.mqtt.prefix
        discoveryPrefix = config.mqtt.homeAssistant.prefix
    }

    /// Why `topic` is not an acceptable response topic; nil when it is.
    func refusal(for topic: String) -> String? {
        let bytes = topic.utf8.count
        if bytes == 0 || bytes > Self.maxBytes { return "it must be 1–\(Self.maxBytes) bytes (is \(bytes))" }
        if topic.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == 0 }) {
            return "it contains a wildcard or NUL"
        }
        if topic.hasPrefix("$") { return "$-topics belong to the broker" }
        for (prefix, what) in [(speakerPrefix, "the speakers' own topics"), (discoveryPrefix, "Home Assistant's discovery topics")]
            where !prefix.isEmpty && (topic == prefix || topic.hasPrefix(prefix + "/")) {
            return "it is under \(prefix)/, \(what)"
        }
        return nil
    }
}
