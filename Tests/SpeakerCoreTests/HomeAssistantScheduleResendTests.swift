// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

/// Commands that change what Home Assistant discovery describes re-send it
/// at once, before the state that shows the change; others send nothing.
@Suite struct HomeAssistantScheduleResendTests {
    let topic = "homeassistant/device/kitchen/config"
    let base = HomeAssistantDiscoveryTests()

    func connected(configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = Harness(configure: configure)
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        return h
    }

    func components(_ fx: [SpeakerEffect]) throws -> [String: JSONValue] {
        let sent = try #require(fx.publications.first { $0.topic == topic }, "\(fx.topics)")
        #expect(sent.retain && sent.qos == 1)
        guard case .object(let members)? = try JSONParser().parse(sent.payload)["components"] else { return [:] }
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value) })
    }

    @Test func rulesAddedOverMQTTGetTheirSwitchesBeforeTheSchedulesTopicShowsThem() throws {
        var h = connected()
        let fx = h.command(#"{"id":"a","action":"setSchedules","schedules":[{"at":"07:00","action":"stop"},{"at":"08:00","action":"stop"}]}"#)
        let c = try components(fx)
        #expect(c["schedule_1"]?["name"] == .string("Schedule 1") && c["schedule_2"]?["name"] == .string("Schedule 2"))
        #expect(base.isRetired(c["schedule_3"]))
        let schedules = try #require(fx.topics.firstIndex(of: "ambient-speaker/kitchen/schedules"), "\(fx.topics)")
        #expect(try #require(fx.topics.firstIndex(of: topic)) < schedules)
        #expect(fx.publications.filter { $0.topic == topic }.count == 1)
        // Enabling a rule changes nothing discovery shows; neither does a command it does not describe.
        #expect(!h.command(#"{"id":"b","action":"setScheduleEnabled","index":1,"enabled":false}"#).topics.contains(topic))
        #expect(!h.command(#"{"id":"c","action":"setVolume","level":0.2}"#).topics.contains(topic))
        // Back to one rule: the second switch retires.
        let fewer = try components(h.command(#"{"id":"d","action":"setSchedules","schedules":[{"at":"07:00","action":"stop"}]}"#))
        #expect(base.isRetired(fewer["schedule_2"]) && !base.isRetired(fewer["schedule_1"]))
    }

    @Test func theNightCapSetOverMQTTIsWhatItsEntitiesSend() throws {
        var h = connected()
        let c = try components(h.command(#"{"id":"a","action":"setNightCap","nightCap":{"from":"21:00","to":"06:30","maxLevel":0.2}}"#))
        let on = try #require(c["night_cap"]?["command_template"]?.stringValue)
        #expect(on.contains(#""nightCap":{"from":"21:00","to":"06:30","maxLevel":0.2}"#), "\(on)")
        #expect(c["night_cap_level"]?["command_template"]?.stringValue?.contains(#""from":"21:00","to":"06:30""#) == true)
        // Off again: the switch turns on the configured cap (none here: the default window).
        let off = try components(h.command(#"{"id":"b","action":"setNightCap","nightCap":null}"#))
        #expect(off["night_cap"]?["command_template"]?.stringValue?.contains(#""from":"22:00","to":"07:00""#) == true)
    }

    @Test func aRefusedCommandSendsNoDiscovery() {
        var h = connected { $0.volume.mode = .gpioStep }
        let fx = h.command(#"{"id":"a","action":"setNightCap","nightCap":{"from":"21:00","to":"06:30","maxLevel":0.2}}"#)
        #expect(!fx.topics.contains(topic), "\(fx.topics)")
    }

    @Test func offlineOrWithDiscoveryOffACommandSendsNoDiscovery() {
        var h = connected()
        h.send(.mqttDisconnected(at: h.now))
        #expect(!h.command(#"{"id":"a","action":"setSchedules","schedules":[{"at":"07:00","action":"stop"}]}"#).topics.contains(topic))
        var off = connected { $0.mqtt.homeAssistant.enabled = false }
        #expect(!off.command(#"{"id":"b","action":"setSchedules","schedules":[{"at":"07:00","action":"stop"}]}"#).topics.contains(topic))
    }
}
