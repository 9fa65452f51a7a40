// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

/// Home Assistant's `online` on `homeassistant/status` re-sends discovery
/// once per burst, after a random delay drawn from the environment (the
/// harness draws lower bound + 250 ms), with manual time.
@Suite struct HomeAssistantResendTests {
    let topic = "homeassistant/device/kitchen/config"
    var delay: Int { LinkState.homeAssistantResendDelayMs.lowerBound + Harness.randomOffset }

    func connected(_ configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = Harness(configure: configure)
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        return h
    }

    @Test func aThousandOnlineMessagesGiveOneResendAfterTheRandomDelay() throws {
        var h = connected()
        var sent: [Publication] = []
        for _ in 0..<1000 { sent += h.send(.homeAssistantStatus(online: true, at: h.now)).publications }
        #expect(sent.isEmpty, "nothing goes out before the delay")
        #expect(h.speaker.state.link.homeAssistantResendAt == h.now.advanced(byMilliseconds: delay))
        #expect(h.speaker.nextDeadline! <= h.now.advanced(byMilliseconds: delay))
        sent += h.advance(ms: delay - 1).publications
        #expect(sent.isEmpty)
        sent += h.advance(ms: 1).publications
        // Later ticks send nothing more.
        sent += h.advance(ms: 10_000).publications
        #expect(sent.map(\.topic) == [topic])
        let publication = try #require(sent.first)
        #expect(publication.retain && publication.qos == 1)
        #expect(try JSONParser().parse(publication.payload) == h.speaker.homeAssistantDiscovery.payload)
        #expect(h.speaker.state.link.homeAssistantResendAt == nil)
    }

    @Test func onlineMessagesDuringTheDelayJoinTheBurstAndALaterOneStartsANewOne() {
        var h = connected()
        var count = 0
        h.send(.homeAssistantStatus(online: true, at: h.now))
        for _ in 0..<10 {
            h.now = h.now.advanced(byMilliseconds: 50)
            count += h.send(.homeAssistantStatus(online: true, at: h.now)).topics.filter { $0 == topic }.count
        }
        count += h.advance(ms: delay).topics.filter { $0 == topic }.count
        #expect(count == 1)
        // Home Assistant restarts again later: one more.
        h.send(.homeAssistantStatus(online: true, at: h.now))
        count += h.advance(ms: delay).topics.filter { $0 == topic }.count
        #expect(count == 2)
    }

    @Test func offlineAndDisabledDiscoveryAskForNothing() {
        var h = connected()
        #expect(h.send(.homeAssistantStatus(online: false, at: h.now)).isEmpty)
        #expect(!h.advance(ms: 10_000).topics.contains(topic))
        var off = connected { $0.mqtt.homeAssistant.enabled = false }
        off.send(.homeAssistantStatus(online: true, at: off.now))
        #expect(off.speaker.state.link.homeAssistantResendAt == nil)
        #expect(!off.advance(ms: 10_000).topics.contains(topic))
    }

    @Test func aReconnectSendsDiscoveryFirstAndCancelsThePendingResend() {
        var h = connected()
        h.send(.homeAssistantStatus(online: true, at: h.now))
        h.send(.mqttDisconnected(at: h.now))
        let fx = h.send(.mqttConnected(at: h.now))
        #expect(fx.topics.first == topic)
        #expect(!h.advance(ms: 10_000).topics.contains(topic), "already sent at the reconnect")
        // Due while the broker is away: dropped (the next connect sends it first anyway).
        h.send(.homeAssistantStatus(online: true, at: h.now))
        h.send(.mqttDisconnected(at: h.now))
        #expect(!h.advance(ms: delay).topics.contains(topic))
        #expect(h.speaker.state.link.homeAssistantResendAt == nil)
    }

    @Test func theDrawIsKeptInsideTheRange() {
        var config = SpeakerConfig.defaults(hostname: "kitchen")
        config.inputs.encoder.acceleration = false
        let env = SpeakerEnvironment(wallClock: { WallClockReading(seconds: 0, milliseconds: 0) }, clockSynced: { true },
                                     newSessionID: { "s" }, software: "t", randomInt: { _ in 1_000_000 })
        var speaker = Speaker(config: config, catalog: Harness.catalog, environment: env, revisionReservation: 0, epoch: "e1")
        let now = MonotonicInstant.milliseconds(0)
        _ = speaker.reduce(.homeAssistantStatus(online: true, at: now))
        #expect(speaker.state.link.homeAssistantResendAt == now.advanced(byMilliseconds: LinkState.homeAssistantResendDelayMs.upperBound))
    }
}
