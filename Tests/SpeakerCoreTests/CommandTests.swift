// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

@Suite struct CommandTests {
    func result(_ fx: [SpeakerEffect]) -> JSONValue? { fx.lastPublished("command/result") }

    @Test(arguments: [
        (#"not json"#, "malformed", JSONValue.null),
        (#"[1,2]"#, "malformed", .null),
        (#"{"action":"play"}"#, "malformed", .null),
        (#"{"id":42,"action":"play"}"#, "malformed", .null),
        (#"{"id":"","action":"play"}"#, "malformed", .null),
        (#"{"id":"x1"}"#, "malformed", .string("x1")),
        (#"{"id":"x2","action":7}"#, "malformed", .string("x2")),
        (#"{"id":"x3","action":"dance"}"#, "unknown-action", .string("x3")),
        (#"{"id":"x4","action":"select"}"#, "malformed", .string("x4")),
        (#"{"id":"x5","action":"setVolume","level":"loud"}"#, "malformed", .string("x5")),
        (#"{"id":"x6","action":"setVolume","level":NaN}"#, "invalid-value", .string("x6")),
        (#"{"id":"x7","action":"setVolume","level":1e999}"#, "invalid-value", .string("x7")),
        (#"{"id":"x8","action":"volumeUp","steps":21}"#, "invalid-value", .string("x8")),
        (#"{"id":"x9","action":"volumeDown","steps":1.5}"#, "invalid-value", .string("x9")),
        (#"{"id":"y1","action":"volumeDown","steps":"2"}"#, "malformed", .string("y1")),
        (#"{"id":"y2","action":"select","soundID":"nope"}"#, "unknown-sound", .string("y2")),
    ])
    func rejectedCommandsGetOneResultWithTheRightCodeAndChangeNothing(payload: String, code: String, id: JSONValue) {
        var h = Harness()
        h.send(.start(at: h.now))
        let before = h.state
        let fx = h.command(payload)
        #expect(fx.published("command/result").count == 1)
        #expect(result(fx)?["ok"] == .bool(false))
        #expect(result(fx)?["id"] == id)
        #expect(result(fx)?["error"]?["code"] == .string(code))
        #expect(result(fx)?["error"]?["message"]?.stringValue?.isEmpty == false)
        #expect(fx.audioRequests.isEmpty)
        #expect(fx.published("session").isEmpty)
        #expect(h.state.transport.session == before.transport.session && h.state.volume.level == before.volume.level)
    }

    @Test func oversizedPayloadsAreRejectedUnparsed() {
        var h = Harness()
        let big = #"{"id":"big","action":"play","pad":""# + String(repeating: "x", count: 5000) + #""}"#
        let fx = h.command(big)
        #expect(result(fx)?["error"]?["code"] == .string("too-large"))
        #expect(result(fx)?["id"] == .null, "not parsed, so the id is unknown")
    }

    @Test func duplicateIDsReSendTheOriginalResultAndApplyNothing() {
        var h = Harness()
        h.send(.start(at: h.now))
        let first = h.commandDone(#"{"id":"dup","action":"volumeUp","steps":2}"#)
        #expect(result(first)?.jsonText == #"{"id":"dup","ok":true,"revision":2,"level":0.5}"#)
        let again = h.command(#"{"id":"dup","action":"volumeUp","steps":2}"#)
        #expect(again.audioRequests.isEmpty)
        #expect(result(again) == result(first))
        #expect(h.state.volume.level == .absolute(level: 0.5))
        let rejected = h.command(#"{"id":"bad","action":"select","soundID":"nope"}"#)
        #expect(h.command(#"{"id":"bad","action":"select","soundID":"pink"}"#).lastPublished("command/result") == result(rejected),
                "an id seen before is never applied again, even with another body")
    }

    @Test func aDuplicateOfACommandInFlightGetsNoSecondResult() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.command(#"{"id":"p","action":"play"}"#)
        let dup = h.command(#"{"id":"p","action":"play"}"#)
        #expect(dup.publications.isEmpty && dup.audioRequests.isEmpty)
        let done = h.send(.engine(.playing(ticket: 1), at: h.now))
        #expect(done.published("command/result").count == 1)
    }

    @Test func theDuplicateWindowHolds256IDs() {
        var h = Harness()
        h.send(.start(at: h.now))
        for i in 0..<257 { h.command(#"{"id":"v\#(i)","action":"volumeDown"}"#) }
        #expect(h.command(#"{"id":"v0","action":"volumeUp"}"#).audioRequests == [.setLevel(0.05)], "v0 fell out of the window")
        #expect(h.command(#"{"id":"v256","action":"volumeUp"}"#).audioRequests.isEmpty, "v256 is still remembered")
    }

    @Test func mqtt5ResponseTopicGetsTheResultWithCorrelationData() {
        var h = Harness()
        h.send(.start(at: h.now))
        let fx = h.command(#"{"id":"r","action":"setVolume","level":0.3}"#, responseTopic: "phone/replies", correlation: [1, 2, 3])
        let reply = fx.publications.first { $0.topic == "phone/replies" }
        #expect(reply?.correlationData == [1, 2, 3])
        #expect(reply?.text == #"{"id":"r","ok":true,"revision":2,"level":0.3}"#)
        #expect(fx.published("command/result").count == 1)
    }
}

@Suite struct VolumeTests {
    @Test func setVolumeClampsToMaxLevelAndReportsTheAppliedLevel() {
        var h = Harness { $0.volume.maxLevel = 0.8 }
        h.send(.start(at: h.now))
        let fx = h.command(#"{"id":"v","action":"setVolume","level":3}"#)
        #expect(fx.audioRequests == [.setLevel(0.8)])
        #expect(fx.lastPublished("command/result")?["level"] == .number(0.8))
        #expect(fx.lastPublished("device")?["volume"]?["level"] == .number(0.8))
        #expect(fx.lastPublished("session")?["devices"]?.arrayFirst?["volume"]?["level"] == .number(0.8))
        let low = h.command(#"{"id":"w","action":"setVolume","level":-1}"#)
        #expect(low.lastPublished("command/result")?["level"] == .number(0))
    }

    @Test func stepsMoveByTheConfiguredStepAndStopAtTheEnds() {
        var h = Harness()
        h.send(.start(at: h.now))
        #expect(h.command(#"{"id":"a","action":"volumeUp","steps":3}"#).audioRequests == [.setLevel(0.55)])
        #expect(h.command(#"{"id":"b","action":"volumeUp","steps":20}"#).audioRequests == [.setLevel(1.0)])
        let atTop = h.command(#"{"id":"c","action":"volumeUp"}"#)
        #expect(atTop.audioRequests.isEmpty && atTop.published("session").isEmpty)
        #expect(atTop.lastPublished("command/result")?["level"] == .number(1))
    }

    @Test func aStepOnlyDeviceNeverPublishesALevelAndPulsesTheAmp() {
        var h = Harness { $0.volume.mode = .gpioStep }
        let start = h.send(.start(at: h.now))
        #expect(start.audioRequests.isEmpty)
        #expect(start.lastPublished("device")?["volume"]?.jsonText == #"{"control":"relative"}"#)
        let commands = start.lastPublished("session")?["commands"]
        #expect(commands == .array(["play", "toggle", "next", "previous", "select", "volumeUp", "volumeDown", "mute", "setSchedules", "saveMix"].map { .string($0) }))
        let set = h.command(#"{"id":"s","action":"setVolume","level":0.5}"#)
        #expect(set.lastPublished("command/result")?["error"]?["code"] == .string("unsupported"))
        #expect(!set.contains { if case .amp = $0 { return true } else { return false } })
        let up = h.command(#"{"id":"u","action":"volumeUp","steps":3}"#)
        #expect(up.contains(.amp(.up(count: 3))))
        #expect(up.lastPublished("command/result")?.jsonText == #"{"id":"u","ok":true,"revision":1}"#)
        let knob = h.edge(.encoderB, true) + h.edge(.encoderA, true, afterMs: 3) + h.edge(.encoderB, false, afterMs: 3) + h.edge(.encoderA, false, afterMs: 3)
        #expect(knob.contains(.amp(.down(count: 1))))
        for p in (start + up + knob).publications { #expect(!p.text.contains("\"level\""), "no level anywhere: \(p.text)") }
    }
}
