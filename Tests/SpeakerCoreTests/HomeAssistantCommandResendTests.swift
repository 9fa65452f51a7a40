// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

/// Commands that change what Home Assistant discovery describes re-send it
/// once, before the state that shows the change; others send nothing.
@Suite struct HomeAssistantCommandResendTests {
    let topic = "homeassistant/device/kitchen/config"

    func connected(configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = Harness(configure: configure)
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        return h
    }

    @Test func aMixSavedOrDeletedOverMQTTResendsDiscoveryOnceBeforeTheCatalog() throws {
        var h = connected()
        let fx = h.command(#"{"id":"a","action":"saveMix","mixID":"dusk","name":"Dusk","layers":[{"soundID":"brown","level":0.5}]}"#)
        let sent = fx.publications.filter { $0.topic == topic }
        #expect(sent.count == 1, "\(fx.topics)")
        let options = try JSONParser().parse(try #require(sent.first).payload)["components"]?["sound"]?["options"]
        guard case .array(let labels)? = options else { Issue.record("no options: \(String(describing: options))"); return }
        #expect(labels.contains(.string("Dusk")), "\(labels)")
        if let catalog = fx.topics.firstIndex(of: "ambient-speaker/kitchen/catalog") {
            #expect(try #require(fx.topics.firstIndex(of: topic)) < catalog)
        }
        #expect(h.command(#"{"id":"b","action":"deleteMix","mixID":"dusk"}"#).publications.filter { $0.topic == topic }.count == 1)
        // A command that changes nothing discovery shows sends nothing.
        #expect(!h.command(#"{"id":"c","action":"setVolume","level":0.2}"#).topics.contains(topic))
    }

    @Test func offlineOrWithDiscoveryOffACommandSendsNoDiscovery() {
        var h = connected()
        h.send(.mqttDisconnected(at: h.now))
        let save = #"{"id":"a","action":"saveMix","mixID":"dusk","name":"Dusk","layers":[{"soundID":"brown","level":0.5}]}"#
        #expect(!h.command(save).topics.contains(topic))
        var off = connected { $0.mqtt.homeAssistant.enabled = false }
        #expect(!off.command(save).topics.contains(topic))
    }
}
