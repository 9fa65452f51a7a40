// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpeakerProtocol
import Testing
import TestSupport

/// Schedules and the night cap on the built binary and a real mosquitto: a
/// rule due a minute before start-up fires (the catch-up window) with no
/// command; the night cap holds the level; the schedule commands are
/// validated and answered; every payload matches docs/asyncapi.json.
@Suite(.serialized) struct ScheduleEndToEndTests {
    typealias C = ContractEndToEndTests

    /// `HH:MM` in UTC, `minutes` from now.
    static func utcClock(minutesFromNow minutes: Int) -> String {
        let t = (Int(time(nil)) + minutes * 60) % 86_400
        return String(format: "%02d:%02d", t / 3600, t / 60 % 60)
    }

    @Test func aRuleFiresOnTheWallClockAndTheNightCapHoldsTheLevel() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("#")
        let due = Self.utcClock(minutesFromNow: -1), from = Self.utcClock(minutesFromNow: -30), to = Self.utcClock(minutesFromNow: 60)
        let speaker = try SpeakerProcess(brokerPort: broker.port, extraConfig: """
            "clock":{"requireSync":false,"timeZone":"UTC"},
            "volume":{"initialLevel":0.8,"night":{"from":"\(from)","to":"\(to)","maxLevel":0.3}},
            "schedules":[{"at":"\(due)","action":"play","soundID":"rain","fadeSeconds":0},{"at":"\(Self.utcClock(minutesFromNow: 120))","action":"stop"}]
            """)
        let root = speaker.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        // The rule due a minute ago fired at start: playing "rain" with no command sent.
        let playing = peer.waitForMessage(topic: "\(root)/session", timeout: 10) { C.parse($0)?["isPlaying"] == .bool(true) }
        #expect(C.parse(playing)?["soundID"] == .string("rain"), "\(speaker.log)")
        let device = C.parse(peer.messages(on: "\(root)/device").last)
        #expect(device?["nightCap"]?["active"] == .bool(true))
        #expect(device?["volume"]?["maxLevel"] == .number(0.3) && device?["volume"]?["level"] == .number(0.3))
        let schedules = C.parse(peer.messages(on: "\(root)/schedules").last)
        #expect(schedules?["next"]?["rule"] == .number(1))
        #expect(schedules?["rules"]?.arrayCount == 2)

        // Inside the window setVolume clamps, and the result carries the level applied.
        #expect(try C.send(peer, root, "v", #"{"id":"v","action":"setVolume","level":0.9}"#)?["level"] == .number(0.3))
        // The schedule commands: validated like the config, answered, published.
        let bad = try C.send(peer, root, "s-bad", #"{"id":"s-bad","action":"setSchedules","schedules":[{"at":"25:00","action":"play"}]}"#)
        #expect(C.code(bad) == "invalid-value")
        #expect(bad?["error"]?["message"] == .string(#"schedules[0].at: expected "HH:MM" (00:00 to 23:59), got "25:00""#))
        #expect(C.code(try C.send(peer, root, "s-type", #"{"id":"s-type","action":"setSchedules","schedules":{}}"#)) == "malformed")
        let marker = Monotonic.nanoseconds()
        #expect(try C.send(peer, root, "s-ok", #"{"id":"s-ok","action":"setSchedules","schedules":[{"at":"06:30","days":["mon","fri"],"action":"play","level":0.2}]}"#)?["ok"] == .bool(true))
        let replaced = C.parse(peer.waitForMessage(topic: "\(root)/schedules", timeout: 10) { $0.receivedAtNanoseconds >= marker })
        #expect(replaced?["rules"]?.arrayCount == 1)
        #expect(try C.send(peer, root, "s-off", #"{"id":"s-off","action":"setScheduleEnabled","index":0,"enabled":false}"#)?["ok"] == .bool(true))
        #expect(C.code(try C.send(peer, root, "s-idx", #"{"id":"s-idx","action":"setScheduleEnabled","index":5,"enabled":true}"#)) == "invalid-value")
        #expect(try C.send(peer, root, "n-off", #"{"id":"n-off","action":"setNightCap","nightCap":null}"#)?["ok"] == .bool(true))
        _ = peer.waitForMessage(topic: "never", timeout: 0.3)
        #expect(C.parse(peer.messages(on: "\(root)/device").last)?["nightCap"] == .null)
        #expect(C.parse(peer.messages(on: "\(root)/schedules").last)?["next"] == .null, "the only rule is disabled")
        let checked = try C.validateAll(peer, root: root, deviceID: "e2e")
        print("schedules: validated \(checked) real payloads against docs/asyncapi.json")
        #expect(checked > 10)
    }
}

extension JSONValue {
    var arrayCount: Int? { if case .array(let items) = self { return items.count } else { return nil } }
}
