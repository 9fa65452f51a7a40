// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

@Suite struct TransportTests {
    @Test func startPublishesCatalogDeviceAndAnEndedSessionAndSetsTheLevel() {
        var h = Harness()
        let fx = h.send(.start(at: h.now))
        #expect(fx.audioRequests == [.setLevel(0.4)])
        // Home Assistant discovery first: the MQTT link may already be up before the core hears of it.
        #expect(fx.topics == ["homeassistant/device/kitchen/config", "ambient-speaker/kitchen/catalog",
                              "ambient-speaker/kitchen/device", "ambient-speaker/kitchen/schedules", "ambient-speaker/kitchen/session"])
        #expect(fx.contains(.reserveRevisions(through: 1000)))
        let session = fx.lastPublished("session")
        #expect(session?["id"] == .null)
        #expect(session?["ended"] == .bool(true))
        #expect(session?["isPlaying"] == .bool(false))
        #expect(session?["soundID"] == .string("white"))
        #expect(session?["revision"] == .number(1))
        #expect(session?["updatedAt"] == .string("2026-11-29T12:00:00.123Z"))
        #expect(session?["commands"] == .array(["play", "toggle", "next", "previous", "select", "setVolume", "volumeUp", "volumeDown", "mute", "setSchedules", "setNightCap", "saveMix"].map { .string($0) }))
        #expect(fx.lastPublished("device") == (try? JSONParser().parse(
            #"{"id":"kitchen","name":"Ambient speaker (kitchen)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"muted":false,"audio":"ok","underruns":0,"software":"ambient-speaker test","epoch":"e1","nightCap":null}"#)))
        #expect(fx.published("catalog").first?.jsonText == #"[{"id":"white","name":"White noise","summary":"flat","kind":"sound"},{"id":"pink","name":"Pink noise","summary":"soft","kind":"sound"},{"id":"brown","name":"Brown noise","summary":"deep","kind":"sound"}]"#)
    }

    @Test func playWaitsForTheEngineBeforePublishingAndAnswering() {
        var h = Harness()
        h.send(.start(at: h.now))
        let fx = h.command(#"{"id":"c1","action":"play"}"#)
        #expect(fx.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 1)])
        #expect(fx.publications.isEmpty, "nothing is published before the engine has done it")
        #expect(h.state.transport.session.isPlaying == false)
        let done = h.send(.engine(.playing(ticket: 1), at: h.now))
        let session = done.lastPublished("session")
        #expect(session?["isPlaying"] == .bool(true))
        #expect(session?["intendsPlayback"] == .bool(true))
        #expect(session?["id"] == .string("session-1"))
        #expect(session?["ended"] == .bool(false))
        #expect(session?["revision"] == .number(2))
        // The result leaves just ahead of the session it names (Speaker+Publishing).
        #expect(done.topics == ["ambient-speaker/kitchen/command/result", "ambient-speaker/kitchen/session"])
        #expect(done.lastPublished("command/result")?.jsonText == #"{"id":"c1","ok":true,"revision":2}"#)
    }

    @Test func pauseResumeAndSwitchKeepTheSessionIDAndStopEndsIt() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"a","action":"play"}"#)
        let paused = h.commandDone(#"{"id":"b","action":"pause"}"#)
        #expect(paused.lastPublished("session")?["isPlaying"] == .bool(false))
        #expect(paused.lastPublished("session")?["id"] == .string("session-1"))
        #expect(paused.lastPublished("session")?["ended"] == .bool(false))
        let resumed = h.commandDone(#"{"id":"c","action":"toggle"}"#)
        #expect(resumed.lastPublished("session")?["id"] == .string("session-1"))
        let next = h.command(#"{"id":"d","action":"next"}"#)
        #expect(next.audioRequests == [.switchTo(soundID: "pink", crossfadeMs: 1500, ticket: 4)])
        let switched = h.engineDoes(next)
        #expect(switched.lastPublished("session")?["soundID"] == .string("pink"))
        #expect(switched.lastPublished("session")?["id"] == .string("session-1"))
        let stopped = h.commandDone(#"{"id":"e","action":"stop"}"#)
        let ended = stopped.lastPublished("session")
        #expect(ended?["ended"] == .bool(true))
        #expect(ended?["isPlaying"] == .bool(false))
        #expect(ended?["id"] == .string("session-1"), "an ended session keeps the last id")
        #expect(ended?["soundID"] == .string("pink"))
        let again = h.commandDone(#"{"id":"f","action":"play"}"#)
        #expect(again.lastPublished("session")?["id"] == .string("session-2"))
    }

    @Test func nextAndPreviousWrapAndStartPlaybackWithAFadeIn() {
        var h = Harness()
        h.send(.start(at: h.now))
        let prev = h.command(#"{"id":"p","action":"previous"}"#)
        #expect(prev.audioRequests == [.play(soundID: "brown", fadeMs: 400, ticket: 1)])
        h.engineDoes(prev)
        let next = h.command(#"{"id":"n","action":"next"}"#)
        #expect(next.audioRequests == [.switchTo(soundID: "white", crossfadeMs: 1500, ticket: 2)])
    }

    @Test func selectPlaysAKnownSoundAndRejectsAnUnknownOneChangingNothing() {
        var h = Harness()
        h.send(.start(at: h.now))
        let before = h.state
        let bad = h.command(#"{"id":"s1","action":"select","soundID":"thunder"}"#)
        #expect(bad.audioRequests.isEmpty)
        #expect(bad.lastPublished("command/result")?["error"]?["code"] == .string("unknown-sound"))
        #expect(h.state.transport.session == before.transport.session && h.state.transport.selectedIndex == before.transport.selectedIndex)
        let good = h.commandDone(#"{"id":"s2","action":"select","soundID":"brown"}"#)
        #expect(good.lastPublished("session")?["soundID"] == .string("brown"))
        #expect(good.lastPublished("session")?["soundName"] == .string("Brown noise"))
    }

    @Test func engineReportsAreCumulativeSoAnOvertakenPauseStillGetsItsResult() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"a","action":"play"}"#)
        h.command(#"{"id":"b","action":"pause"}"#)
        let play = h.command(#"{"id":"c","action":"play"}"#)
        #expect(play.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 3)])
        let done = h.send(.engine(.playing(ticket: 3), at: h.now))
        #expect(done.published("command/result").map { $0["id"] } == [.string("b"), .string("c")])
        #expect(done.published("session").isEmpty, "playing before and after: nothing changed, no new revision")
        #expect(done.published("command/result").allSatisfy { $0["revision"] == .number(2) })
        #expect(h.state.transport.session.isPlaying)
    }

    @Test func audioFailureKeepsIntentRejectsPlayAndResumesWhenTheDeviceReturns() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"a","action":"play"}"#)
        let lost = h.send(.engine(.unavailable(reason: "device gone"), at: h.now))
        let session = lost.lastPublished("session")
        #expect(session?["isPlaying"] == .bool(false))
        #expect(session?["intendsPlayback"] == .bool(true))
        #expect(session?["devices"]?.arrayFirst?["audio"] == .string("unavailable"))
        #expect(lost.lastPublished("device")?["audio"] == .string("unavailable"))
        #expect(session?["commands"] == .array(["pause", "toggle", "stop", "setVolume", "volumeUp", "volumeDown", "setSleepTimer", "mute", "setSchedules", "setNightCap", "saveMix"].map { .string($0) }))
        h.commandDone(#"{"id":"b","action":"pause"}"#)
        let rejected = h.command(#"{"id":"c","action":"play"}"#)
        #expect(rejected.lastPublished("command/result")?["error"]?["code"] == .string("audio-unavailable"))
        #expect(rejected.audioRequests.isEmpty)
        h.commandDone(#"{"id":"d","action":"volumeUp"}"#)
        // Intent back on is impossible while unavailable; a device return without intent does not play.
        let back = h.send(.engine(.available, at: h.now))
        #expect(back.audioRequests.isEmpty)
        #expect(back.lastPublished("device")?["audio"] == .string("ok"))
    }

    @Test func deviceReturnResumesPlaybackWhenTheListenerStillIntendsIt() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"a","action":"play"}"#)
        h.send(.engine(.unavailable(reason: "gone"), at: h.now))
        let back = h.send(.engine(.available, at: h.now))
        #expect(back.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 2)])
        let resumed = h.engineDoes(back)
        #expect(resumed.lastPublished("session")?["isPlaying"] == .bool(true))
    }

    @Test func aPausedSessionEndsAfterTheIdleTimeout() {
        var h = Harness { $0.session.idleTimeoutSeconds = 60 }
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"a","action":"play"}"#)
        h.commandDone(#"{"id":"b","action":"pause"}"#)
        let pausedAt = h.now
        h.advance(ms: StateSaveSchedule.settleMs)  // the (rate-limited) state save is due first
        #expect(h.speaker.nextDeadline == pausedAt.advanced(byMilliseconds: 60_000))
        #expect(h.advance(ms: 59_999 - StateSaveSchedule.settleMs).published("session").isEmpty)
        let ended = h.advance(ms: 1).lastPublished("session")
        #expect(ended?["ended"] == .bool(true))
        #expect(h.speaker.nextDeadline == nil)
    }

    @Test func reconnectRepublishesDiscoveryDeviceCatalogSessionThenOnlineWithoutNewRevision() {
        var h = Harness()
        h.send(.start(at: h.now))
        let fx = h.send(.mqttConnected(at: h.now))
        // Home Assistant discovery first, so it knows the device before the state that depends on it.
        #expect(fx.topics == ["homeassistant/device/kitchen/config"]
                + ["device", "catalog", "schedules", "session", "availability"].map { "ambient-speaker/kitchen/\($0)" })
        #expect(fx.publications.allSatisfy { $0.retain && $0.qos == 1 })
        #expect(fx.publications.last?.text == "online")
        #expect(fx.lastPublished("session")?["revision"] == .number(1))
    }

    @Test func revisionsContinueAfterTheLastReservationAndReserveBeforePublishing() {
        var h = Harness(revisionReservation: 5000)
        let fx = h.send(.start(at: h.now))
        #expect(fx.lastPublished("session")?["revision"] == .number(5001))
        let reserveIndex = fx.firstIndex(of: .reserveRevisions(through: 6000))
        let sessionIndex = fx.firstIndex { if case .publish(let p) = $0 { return p.topic.hasSuffix("/session") } else { return false } }
        #expect(reserveIndex != nil && sessionIndex != nil && reserveIndex! < sessionIndex!)
        var c = RevisionCounter(persistedReservation: 0, epoch: "e1")
        var reservations: [UInt64] = []
        #expect(c.next() == .waiting, "nothing is handed out before a reservation")
        for _ in 0..<2500 {
            if let through = c.reservationDue() {
                reservations.append(through)
                if through == 1000 { #expect(c.next() == .waiting, "nothing is handed out before the reservation is confirmed") }
                c.reserved(through: through)
            }
            guard case .revision = c.next() else { Issue.record("no revision at \(c.current)"); return }
        }
        #expect(reservations == [1000, 2000, 3000], "the next block is reserved when half of this one is used")
        #expect(c.current == 2500)
    }
}

extension JSONValue {
    var arrayFirst: JSONValue? { if case .array(let a) = self { return a.first } else { return nil } }
    var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
}
