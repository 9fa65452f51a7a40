// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import Testing
import TestSupport

/// The sleep timer and mute against the built binary and a real mosquitto:
/// the commands and their errors, `session.sleepTimer`, `device.muted`, a
/// one-minute timer running out (the `event`, the pause), and every payload
/// seen checked against docs/asyncapi.json.
@Suite(.serialized) struct SleepTimerEndToEndTests {
    typealias C = ContractEndToEndTests

    @Test func aTimerRunsOutPausesAndEveryPayloadMatchesTheContract() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("#")
        let speaker = try SpeakerProcess(brokerPort: broker.port, extraConfig: #""sleepTimer":{"fadeSeconds":20}"#)
        let root = speaker.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        let discovery = C.parse(peer.waitForMessage(topic: "homeassistant/device/e2e/config"))
        #expect(discovery?["components"]?["sleep_timer_ended"]?["type"] == .string("sleep_timer_ended"))

        #expect(C.code(try C.send(peer, root, "t-idle", #"{"id":"t-idle","action":"setSleepTimer","minutes":5}"#)) == "unsupported")
        #expect(try C.send(peer, root, "p", #"{"id":"p","action":"play"}"#)?["ok"] == .bool(true))
        #expect(C.code(try C.send(peer, root, "t-0", #"{"id":"t-0","action":"setSleepTimer","minutes":0}"#)) == "invalid-value")
        #expect(C.code(try C.send(peer, root, "t-f", #"{"id":"t-f","action":"setSleepTimer","minutes":5,"fadeSeconds":1801}"#)) == "invalid-value")
        #expect(C.code(try C.send(peer, root, "t-s", #"{"id":"t-s","action":"setSleepTimer","minutes":"5"}"#)) == "malformed")
        #expect(C.code(try C.send(peer, root, "t-m", #"{"id":"t-m","action":"setSleepTimer"}"#)) == "malformed")

        let set = try C.send(peer, root, "t-30", #"{"id":"t-30","action":"setSleepTimer","minutes":30}"#)
        #expect(set?["fadeSeconds"] == .number(20), "the config's default fade")
        var session = C.parse(peer.messages(on: "\(root)/session").last)
        #expect(session?["sleepTimer"]?["minutes"] == .number(30))
        #expect(session?["sleepTimer"]?["remainingSeconds"]?.numberValue.map { $0 > 1790 && $0 <= 1800 } == true)
        #expect(session?["commands"].map { "\($0)".contains("cancelSleepTimer") } == true)
        #expect(try C.send(peer, root, "t-c", #"{"id":"t-c","action":"cancelSleepTimer"}"#)?["ok"] == .bool(true))
        #expect(C.parse(peer.messages(on: "\(root)/session").last)?["sleepTimer"] == .null)

        // Mute: device.muted, the level kept.
        let level = C.parse(peer.messages(on: "\(root)/device").last)?["volume"]?["level"]
        #expect(try C.send(peer, root, "m", #"{"id":"m","action":"mute"}"#)?["ok"] == .bool(true))
        #expect(C.parse(peer.messages(on: "\(root)/device").last)?["muted"] == .bool(true))
        #expect(try C.send(peer, root, "m2", #"{"id":"m2","action":"mute"}"#)?["ok"] == .bool(true))
        #expect(try C.send(peer, root, "u", #"{"id":"u","action":"unmute"}"#)?["ok"] == .bool(true))
        let device = C.parse(peer.messages(on: "\(root)/device").last)
        #expect(device?["muted"] == .bool(false) && device?["volume"]?["level"] == level)

        // A one-minute timer with a 5 s fade runs out: the event, then a paused (not ended) session.
        let marker = Monotonic.nanoseconds()
        let short = try C.send(peer, root, "t-1", #"{"id":"t-1","action":"setSleepTimer","minutes":1,"fadeSeconds":5}"#)
        #expect(short?["fadeSeconds"] == .number(5))
        let fading = peer.waitForMessage(topic: "\(root)/session", timeout: 70) { C.parse($0)?["sleepTimer"]?["fading"] == .bool(true) }
        #expect(fading != nil, "the fade began")
        let ended = peer.waitForMessage(topic: "\(root)/event", timeout: 20) { C.parse($0)?["source"] == .string("sleepTimer") }
        #expect(C.parse(ended) == (try? JSONParser().parse(#"{"source":"sleepTimer","name":"ended"}"#)))
        let paused = peer.waitForMessage(topic: "\(root)/session", timeout: 10) {
            $0.receivedAtNanoseconds >= marker && C.parse($0)?["isPlaying"] == .bool(false) && C.parse($0)?["sleepTimer"] == .null
        }
        session = C.parse(paused)
        #expect(session?["ended"] == .bool(false) && session?["intendsPlayback"] == .bool(false), "paused, not ended")
        #expect(C.parse(peer.messages(on: "\(root)/device").last)?["volume"]?["level"] == level, "the fade did not move the level")

        #expect(C.revisionsIncrease(peer.messages(on: "\(root)/session")))
        let checked = try C.validateAll(peer, root: root, deviceID: "e2e")
        print("validated \(checked) real payloads against docs/asyncapi.json (sleep timer, mute)")
        #expect(checked > 20)
    }
}
