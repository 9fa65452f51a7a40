// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import MQTTLink
import SpeakerSystem
import Testing
import TestSupport

/// MQTTLink against a real mosquitto on loopback; each test has its own broker.
@Suite struct MQTTLinkTests {
    @Test func connectPublishesRetainedStateAndCleanShutdownDoesNotFireWill() throws {
        let broker = try TestBroker()
        let speaker = try LinkHarness(port: broker.port)
        try speaker.link.start()
        #expect(speaker.connected() != nil)
        #expect(speaker.link.isConnected)
        let published = speaker.link.publish(topic: LinkHarness.availability, payload: Array("online".utf8), qos: 1, retain: true)
        guard case .queued = published else { Issue.record("publish: \(published)"); return }

        // publish() only queues (the network thread writes it): wait until the
        // broker has it, so a later subscriber must get it as retained.
        let early = try TestPeer(port: broker.port)
        try early.connect()
        try early.subscribe(LinkHarness.availability)
        #expect(early.waitForMessage(topic: LinkHarness.availability) != nil)
        early.disconnect()

        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe(LinkHarness.availability)
        let retained = peer.waitForMessage(topic: LinkHarness.availability)
        #expect(retained?.payloadString == "online")
        #expect(retained?.retain == true)

        speaker.shutdown()
        #expect(!speaker.link.isConnected)
        let offline = peer.waitForMessage(topic: LinkHarness.availability) { $0.payloadString == "offline" }
        #expect(offline != nil)
        // The broker fires a will at once on an unclean close; give it the chance.
        let second = peer.waitForMessage(topic: LinkHarness.availability, timeout: 0.5) {
            $0.payloadString == "offline" && $0 != offline
        }
        #expect(second == nil, "the will fired after a clean shutdown")
        #expect(peer.messages(on: LinkHarness.availability).map(\.payloadString) == ["online", "offline"])
        #expect(speaker.logs.entries.contains { $0.message.contains("final message") && $0.message.contains("acknowledged") })
    }

    @Test func uncleanConnectionLossFiresWillAndLinkReconnects() throws {
        let broker = try TestBroker()
        let (speaker, peer) = try LinkHarness.online(on: broker)

        let broken = ConnectionSabotage.shutDownConnections(toPort: broker.port, excluding: [peer.socketFD])
        #expect(broken == 1)
        let will = peer.waitForMessage(topic: LinkHarness.availability) { $0.payloadString == "offline" }
        #expect(will != nil, "no will after an unclean disconnect")
        #expect(speaker.disconnected() != nil)
        #expect(speaker.connected(timeout: 10) != nil, "link did not reconnect")
        speaker.shutdown()
    }

    @Test func incomingPayloadsArriveIntactThroughEventFD() throws {
        let broker = try TestBroker()
        let (speaker, peer) = try LinkHarness.online(on: broker)

        var generator = SystemRandomNumberGenerator()
        let payloads: [[UInt8]] = [
            Array(0...255),
            [],
            (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) },
            Array("{\"id\":\"c-1\",\"action\":\"play\"}".utf8),
        ]
        for payload in payloads {
            try peer.publish(topic: LinkHarness.command, payload: payload, qos: 1)
            let message = speaker.message(on: LinkHarness.command)
            #expect(message?.payload == payload, "payload of \(payload.count) bytes")
            #expect(message?.qos == 1)
            #expect(message?.responseTopic == nil)
            #expect(message?.correlationData == nil)
        }
        speaker.shutdown()
    }

    @Test func responseTopicAndCorrelationDataRoundTrip() throws {
        let broker = try TestBroker()
        let (speaker, peer) = try LinkHarness.online(on: broker, alsoSubscribe: ["phone/replies"])

        let correlation: [UInt8] = [0, 1, 2, 0xFF, 0x80]
        let sent = Monotonic.nanoseconds()
        try peer.publish(topic: LinkHarness.command, string: "{\"id\":\"c-7\",\"action\":\"pause\"}",
                         responseTopic: "phone/replies", correlationData: correlation)
        let command = try #require(speaker.message(on: LinkHarness.command))
        #expect(command.responseTopic == "phone/replies")
        #expect(command.correlationData == correlation)

        let reply = speaker.link.publish(topic: try #require(command.responseTopic), payload: Array("{\"ok\":true}".utf8),
                                         qos: 1, retain: false, correlationData: command.correlationData)
        guard case .queued = reply else { Issue.record("reply: \(reply)"); return }
        let received = peer.waitForMessage(topic: "phone/replies")
        #expect(received?.correlationData == correlation)
        #expect(received?.payloadString == "{\"ok\":true}")
        if let received {
            let micros = (received.receivedAtNanoseconds - sent) / 1000
            print("command -> link -> reply round trip on loopback: \(micros) µs")
        }
        speaker.shutdown()
    }

    @Test func reconnectsAndResubscribesAfterBrokerRestart() throws {
        let broker = try TestBroker()  // no persistence: the restarted broker forgets subscriptions
        let speaker = try LinkHarness(port: broker.port)
        try speaker.link.start()
        #expect(speaker.connected() != nil)

        try broker.restart()
        #expect(speaker.disconnected() != nil)
        let present = speaker.connected(timeout: 10)
        #expect(present == false, "a fresh broker has no session for us")
        #expect(speaker.link.isConnected)

        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe(LinkHarness.availability)
        #expect(speaker.announceOnline(to: peer))
        try peer.publish(topic: LinkHarness.command, string: "after-restart")
        #expect(speaker.message(on: LinkHarness.command)?.payload == Array("after-restart".utf8))
        speaker.shutdown()
    }

    @Test func brokerDownAtStartDoesNotBlockAndConnectsLater() throws {
        let broker = try TestBroker()
        broker.stop()
        let speaker = try LinkHarness(port: broker.port)
        // start() only hands the connection to the link's thread: it returns
        // without an error although the broker is down, and the refused
        // attempt arrives later as an event.
        try speaker.link.start()
        #expect(!speaker.link.isConnected)
        #expect(speaker.link.publish(topic: "x", payload: [1], qos: 1, retain: false) == .notConnected)
        #expect(speaker.problem(timeout: 10) != nil, "the refused attempt is reported by the link's thread")

        try broker.start()
        #expect(speaker.connected(timeout: 10) != nil, "link did not connect once the broker came up")
        // The Session Expiry Interval must also be on the retried CONNECT.
        try expectQueuedCommandReachesSuccessor(broker: broker, first: speaker)
    }

    @Test func shutdownWhileBrokerIsDownReturnsPromptly() throws {
        let broker = try TestBroker()
        broker.stop()
        let speaker = try LinkHarness(port: broker.port)
        try speaker.link.start()
        #expect(speaker.disconnected(timeout: 0.3) == nil, "never connected, so no disconnect event")
        speaker.shutdown(timeoutMs: 500)
        // Prompt because nothing is waited for: not connected, the final
        // message is skipped rather than queued for an acknowledgement.
        #expect(speaker.logs.entries.contains { $0.message.contains("not connected; final message") })
    }

    @Test func qos1CommandSentWhileAwayArrivesOnReconnectWithSameClientID() throws {
        let broker = try TestBroker()
        let first = try LinkHarness(port: broker.port)
        try first.link.start()
        #expect(first.connected() == false)
        try expectQueuedCommandReachesSuccessor(broker: broker, first: first)
    }

    @Test func publishWhileNotStartedReportsNotConnectedAndPasswordIsNeverLogged() throws {
        let broker = try TestBroker()
        let speaker = try LinkHarness(port: broker.port, username: "speaker", password: "hunter2-secret")
        #expect(speaker.link.publish(topic: "a", payload: [], qos: 0, retain: false) == .notConnected)
        try speaker.link.start()
        #expect(speaker.connected() != nil)
        speaker.shutdown()
        #expect(!speaker.logs.entries.isEmpty)
        #expect(!speaker.logs.entries.contains { $0.message.contains("hunter2") })
        speaker.shutdown()  // idempotent
    }

    /// `first` is connected: it shuts down cleanly, a peer publishes a QoS 1
    /// command, and a second link with the same client id receives it.
    private func expectQueuedCommandReachesSuccessor(broker: TestBroker, first: LinkHarness) throws {
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe(LinkHarness.availability)
        #expect(first.announceOnline(to: peer))
        first.shutdown()

        try peer.publish(topic: LinkHarness.command, string: "while-away", qos: 1)
        #expect(peer.waitForPublishes())

        let second = try LinkHarness(port: broker.port)
        try second.link.start()
        #expect(second.connected() == true, "the broker kept the session")
        #expect(second.message(on: LinkHarness.command)?.payload == Array("while-away".utf8))
        second.shutdown()
    }

    /// Once connected the main thread owns the socket, and keepalive is its
    /// job too (the 1 s timer in `eventFD` → `mosquitto_loop_misc`). A link
    /// pumped like the main loop but otherwise idle for 15 s must ping: the
    /// broker drops a client silent for 1.5 × keepalive (7.5 s here, or
    /// somewhat later: the broker checks only now and then, so 15 s leaves
    /// room). Then a command still arrives on the same connection.
    @Test func anIdleLinkPumpedByItsLoopPingsPastItsKeepalive() throws {
        let broker = try TestBroker()
        let speaker = try LinkHarness(port: broker.port) { $0.keepaliveSeconds = 5 }
        try speaker.link.start()
        #expect(speaker.connected() != nil)
        #expect(speaker.disconnected(timeout: 15) == nil, "the broker dropped the idle link: no PINGREQ")
        #expect(speaker.link.isConnected)
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.publish(topic: LinkHarness.command, string: "after-idle")
        #expect(speaker.message(on: LinkHarness.command)?.payload == Array("after-idle".utf8))
        #expect(speaker.unclaimed.isEmpty, "no other event while idle: \(speaker.unclaimed)")
        speaker.shutdown()
    }
}
