// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

extension [SpeakerEffect] {
    var logs: [(CoreLogLevel, String)] { compactMap { if case .log(let l, let t) = $0 { return (l, t) } else { return nil } } }
    var warnings: [String] { logs.filter { $0.0 == .warning }.map(\.1) }
}

/// Why the speaker is not connected is said once when it starts and once when
/// it clears; a session taken over again and again by a client with the same
/// id is named (manual time throughout).
@Suite struct BrokerHealthTests {
    static let refused = ConnectionProblem(kind: .refused, detail: "Connection refused")
    static let badLogin = ConnectionProblem(kind: .loginRejected, detail: "Bad user name or password (134)")
    static let lost = ConnectionProblem(kind: .lost, detail: "the connection was closed")

    @Test func row13_eachCauseIsLoggedOnceWhenItStartsAndOnceWhenItClears() {
        var h = Harness()
        h.send(.start(at: h.now))
        #expect(h.speaker.state.link.broker.statusText(connected: false) == "MQTT connecting")
        let first = h.send(.mqttProblem(Self.refused, at: h.now))
        #expect(first.warnings == ["not connected to the broker: the broker's port refuses connections: Connection refused"])
        for _ in 0..<5 { #expect(h.send(.mqttProblem(Self.refused, at: h.now)).logs.isEmpty, "a repeat is not logged again") }
        #expect(h.speaker.state.link.broker.statusText(connected: false)
                == "MQTT not connected: the broker's port refuses connections: Connection refused")

        // A different cause is a new problem: logged once.
        #expect(h.send(.mqttProblem(Self.badLogin, at: h.now)).warnings
                == ["not connected to the broker: the broker rejected the login: Bad user name or password (134)"])
        #expect(h.send(.mqttProblem(Self.badLogin, at: h.now)).logs.isEmpty)

        let connected = h.send(.mqttConnected(at: h.now))
        #expect(connected.warnings == ["connected to the broker again; cleared: the broker rejected the login: Bad user name or password (134)"])
        #expect(h.speaker.state.link.broker.statusText(connected: true) == "MQTT connected")
        #expect(h.speaker.state.link.broker.problem == nil)
    }

    @Test func row13_everyKindHasItsOwnWords() {
        let phrases = ConnectionProblem.Kind.allCases.map(\.phrase)
        #expect(Set(phrases).count == phrases.count)
        #expect(ConnectionProblem(kind: .tls, detail: "certificate verify failed").description
                == "TLS failed: certificate verify failed")
    }

    @Test func row9_aBrokerRestartedAgainAndAgainIsNotATakeover() {
        var h = Harness()
        let own = h.send(.start(at: h.now)).publications.last { $0.topic == "ambient-speaker/kitchen/session" }?.payload
        #expect(own != nil)
        var warnings: [String] = []
        for _ in 0..<10 {
            warnings += h.send(.mqttConnected(at: h.now)).warnings
            // The broker hands back this speaker's own retained session.
            h.send(.retainedSessionSeen(own ?? [], otherPublisher: false, at: h.now))
            h.now = h.now.advanced(byMilliseconds: 1_500)
            h.send(.mqttDisconnected(at: h.now))
            warnings += h.send(.mqttProblem(Self.lost, at: h.now)).warnings
        }
        #expect(!h.speaker.state.link.broker.takeoverSuspected)
        #expect(!warnings.contains { $0.contains("took over") }, "\(warnings)")
    }

    @Test func row9_repeatedShortConnectionsAreATakeoverLoggedOnceUntilStable() {
        var h = Harness()
        h.send(.start(at: h.now))
        var warnings: [String] = []
        for cycle in 0..<6 {
            warnings += h.send(.mqttConnected(at: h.now)).warnings
            // The twin's session is what the broker holds when this speaker comes back.
            h.send(.retainedSessionSeen(Array(#"{"id":"twin-\#(cycle)","revision":7}"#.utf8), otherPublisher: false, at: h.now))
            h.now = h.now.advanced(byMilliseconds: 1_500)
            warnings += h.send(.mqttDisconnected(at: h.now)).warnings
            warnings += h.send(.mqttProblem(Self.lost, at: h.now)).warnings
            h.now = h.now.advanced(byMilliseconds: 700)
        }
        // Two ordinary losses are just losses (each said when it starts and
        // when it clears); the third short one in a row is a takeover, said
        // once, and the three cycles after it add nothing.
        #expect(warnings.count == 5, "\(warnings)")
        #expect(warnings.first == "not connected to the broker: connection lost: the connection was closed")
        #expect(warnings[1] == "connected to the broker again; cleared: connection lost: the connection was closed")
        #expect(warnings.last?.contains("another client with this speaker's client id took over its session") == true)
        #expect(warnings.last?.contains("device id \"kitchen\"") == true)
        #expect(h.speaker.state.link.broker.takeoverSuspected)
        #expect(h.speaker.state.link.broker.statusText(connected: true).contains("another client keeps taking over"))

        // A connection that holds for 10 s ends the episode (the tick deadline says when).
        h.send(.mqttConnected(at: h.now))
        #expect(h.speaker.nextDeadline == h.now.advanced(byMilliseconds: BrokerHealth.stableMs))
        #expect(h.advance(ms: 9_999).warnings.isEmpty)
        let cleared = h.advance(ms: 1).warnings
        #expect(cleared.count == 1 && cleared[0].hasPrefix("the connection has been stable for 10 s; cleared:"), "\(cleared)")
        #expect(!h.speaker.state.link.broker.takeoverSuspected)
        #expect(h.speaker.state.link.broker.statusText(connected: true) == "MQTT connected")
    }

    @Test func row9_anIdenticalSessionFromAnotherPublisherIsEvidenceToo() {
        var h = Harness()
        let own = h.send(.start(at: h.now)).publications.last { $0.topic == "ambient-speaker/kitchen/session" }?.payload ?? []
        for _ in 0..<4 {
            h.send(.mqttConnected(at: h.now))
            h.send(.retainedSessionSeen(own, otherPublisher: true, at: h.now))
            h.now = h.now.advanced(byMilliseconds: 600)
            h.send(.mqttDisconnected(at: h.now))
            h.send(.mqttProblem(Self.lost, at: h.now))
        }
        #expect(h.speaker.state.link.broker.takeoverSuspected)
    }

    @Test func row9_theBrokersTakeoverReasonIsBelievedAtOnce() {
        var h = Harness()
        h.send(.mqttConnected(at: h.now))
        h.now = h.now.advanced(byMilliseconds: 60_000)
        h.send(.mqttDisconnected(at: h.now))
        let fx = h.send(.mqttProblem(ConnectionProblem(kind: .takenOver, detail: "the broker said Session taken over (142)"), at: h.now))
        #expect(fx.warnings.count == 1 && fx.warnings[0].contains("Session taken over (142)"))
        #expect(h.send(.mqttProblem(ConnectionProblem(kind: .takenOver, detail: "again"), at: h.now)).logs.isEmpty)
    }

    @Test func aLongConnectionThatEndsIsAnOrdinaryLoss() {
        var h = Harness()
        for _ in 0..<5 {
            h.send(.mqttConnected(at: h.now))
            h.now = h.now.advanced(byMilliseconds: 20_000)
            h.send(.mqttDisconnected(at: h.now))
            h.send(.mqttProblem(Self.lost, at: h.now))
        }
        #expect(!h.speaker.state.link.broker.takeoverSuspected)
        #expect(h.speaker.state.link.broker.problem == Self.lost)
    }
}

/// Hostile commands: retained commands and response topics.
@Suite struct HostileCommandTests {
    @Test func row6_aRetainedCommandIsIgnoredAndLoggedOnce() {
        var h = Harness()
        h.send(.start(at: h.now))
        let retained = IncomingCommand(payload: Array(#"{"id":"r1","action":"setVolume","level":0.9}"#.utf8), retained: true)
        let first = h.send(.command(retained, at: h.now))
        #expect(first.publications.isEmpty, "no result, no change: \(first.topics)")
        #expect(first.audioRequests.isEmpty)
        #expect(first.warnings.count == 1 && first.warnings[0].contains("ignoring a retained message on ambient-speaker/kitchen/command"))
        // At the next start or reconnect the broker delivers it again: still ignored, not logged again.
        let again = h.send(.command(retained, at: h.now))
        #expect(again.isEmpty, "\(again)")
        #expect(h.speaker.state.commands.retainedCommandsIgnored == 2)
        // The same command published live (retain flag cleared by the broker) runs.
        let live = h.command(#"{"id":"r1","action":"setVolume","level":0.9}"#)
        #expect(live.published("command/result").count == 1)
    }

    @Test(arguments: [
        ("ambient-speaker/kitchen/session", "the speakers' own topics"),
        ("ambient-speaker/kitchen/availability", "the speakers' own topics"),
        ("ambient-speaker/kitchen/command", "the speakers' own topics"),
        ("ambient-speaker/hall/session", "the speakers' own topics"),
        ("ambient-speaker", "the speakers' own topics"),
        ("homeassistant/device/kitchen/config", "Home Assistant's discovery topics"),
        ("$SYS/broker/x", "$-topics belong to the broker"),
        ("replies/+/x", "wildcard"),
        ("replies/#", "wildcard"),
        (String(repeating: "r", count: 257), "1–256 bytes"),
    ])
    func row5_aResponseTopicInAProtectedPlaceIsRefusedAndNothingIsApplied(topic: String, why: String) {
        var h = Harness()
        h.send(.start(at: h.now))
        let fx = h.command(#"{"id":"rt","action":"setVolume","level":0.1}"#, responseTopic: topic, correlation: [9])
        #expect(fx.topics == ["ambient-speaker/kitchen/command/result"], "published only the result: \(fx.topics)")
        let result = fx.lastPublished("command/result")
        #expect(result?["ok"] == .bool(false))
        #expect(result?["error"]?["code"] == .string("malformed"))
        #expect(result?["error"]?["message"]?.stringValue?.contains(why) == true, "\(String(describing: result))")
        #expect(fx.audioRequests.isEmpty, "nothing applied")
    }

    @Test func row5_anOrdinaryResponseTopicGetsTheReply() {
        var h = Harness()
        h.send(.start(at: h.now))
        let fx = h.command(#"{"id":"ok","action":"setVolume","level":0.2}"#, responseTopic: "phone/42/replies", correlation: [7])
        #expect(fx.publications.contains { $0.topic == "phone/42/replies" && $0.correlationData == [7] && !$0.retain })
    }
}
