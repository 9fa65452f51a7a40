// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpeakerProtocol
import Testing
import TestSupport

/// Home Assistant discovery follows a SIGHUP reload of the built binary, seen
/// on a real mosquitto: a new `device.name` re-sends the config at once;
/// `mqtt.homeAssistant.enabled` switched off removes it (empty retained
/// payload) and stops answering `homeassistant/status`; switched on again
/// sends it again.
@Suite(.serialized) struct DiscoveryReloadEndToEndTests {
    static func parse(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    /// Rewrites the speaker's config file with `edit` and sends SIGHUP.
    static func reload(_ speaker: SpeakerProcess, _ edit: (String) -> String) throws {
        let text = try String(contentsOfFile: speaker.configPath, encoding: .utf8)
        let edited = edit(text)
        try #require(edited != text, "the edit changed nothing")
        try edited.write(toFile: speaker.configPath, atomically: true, encoding: .utf8)
        speaker.process.send(SIGHUP)
    }

    @Test func aReloadResendsOrRemovesTheDiscoveryConfig() throws {
        let broker = try TestBroker()
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "hup")
        let root = speaker.topicRoot
        let topic = "homeassistant/device/hup/config"
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        try peer.subscribe(topic)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        let first = Self.parse(peer.waitForMessage(topic: topic, timeout: 10))
        #expect(first?["device"]?["name"] == .string("Ambient speaker (hup)"), "\(String(describing: first))")

        // A new name: discovery (and device) re-sent without a restart.
        var marker = Monotonic.nanoseconds()
        try Self.reload(speaker) { $0.replacingOccurrences(of: #""device":{"id":"hup"}"#, with: #""device":{"id":"hup","name":"Bedroom speaker"}"#) }
        let renamed = Self.parse(peer.waitForMessage(topic: topic, timeout: 20) { $0.receivedAtNanoseconds >= marker })
        #expect(renamed?["device"]?["name"] == .string("Bedroom speaker"), "\(String(describing: renamed))\n\(speaker.log.suffix(2000))")
        #expect(peer.waitForMessage(topic: "\(root)/device", timeout: 10) {
            $0.receivedAtNanoseconds >= marker && Self.parse($0)?["name"] == .string("Bedroom speaker")
        } != nil)

        // Switched off: the empty config removes the device; Home Assistant's birth gets no answer.
        marker = Monotonic.nanoseconds()
        try Self.reload(speaker) { $0.replacingOccurrences(of: #""port":\#(broker.port)"#, with: #""port":\#(broker.port),"homeAssistant":{"enabled":false}"#) }
        let removal = peer.waitForMessage(topic: topic, timeout: 20) { $0.receivedAtNanoseconds >= marker }
        #expect(removal?.payload.isEmpty == true, "\(String(describing: removal?.payloadString))\n\(speaker.log.suffix(2000))")
        // The removal goes out first (discovery before what it describes), the log line after it.
        #expect(speaker.waitForLog(timeout: 10) { $0.contains("applied mqtt.homeAssistant.enabled") })
        let late = try TestPeer(port: broker.port)
        try late.connect()
        try late.subscribe(topic)
        #expect(late.waitForMessage(topic: topic, timeout: 1) == nil, "the retained config is gone")
        late.disconnect()
        marker = Monotonic.nanoseconds()
        try peer.publish(topic: "homeassistant/status", string: "online")
        #expect(peer.waitForMessage(topic: topic, timeout: 1.5) { $0.receivedAtNanoseconds >= marker } == nil, "disabled discovery answered a birth")

        // Switched on again: sent again, and Home Assistant's birth is answered.
        marker = Monotonic.nanoseconds()
        try Self.reload(speaker) { $0.replacingOccurrences(of: #""homeAssistant":{"enabled":false}"#, with: #""homeAssistant":{"enabled":true}"#) }
        let again = Self.parse(peer.waitForMessage(topic: topic, timeout: 20) { $0.receivedAtNanoseconds >= marker && !$0.payload.isEmpty })
        #expect(again?["device"]?["name"] == .string("Bedroom speaker"), "\(String(describing: again))")
        _ = peer.waitForMessage(topic: "\(root)/never", timeout: 0.5)
        marker = Monotonic.nanoseconds()
        try peer.publish(topic: "homeassistant/status", string: "online")
        #expect(peer.waitForMessage(topic: topic, timeout: 10) { $0.receivedAtNanoseconds >= marker && !$0.payload.isEmpty } != nil)
        #expect(try ContractEndToEndTests.validateAll(peer, root: root, deviceID: "hup") > 0)
    }
}
