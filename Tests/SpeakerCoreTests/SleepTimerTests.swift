// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import SpeakerCore
import SpeakerProtocol

/// The sleep timer on manual time: its fade and end, what commands, presses
/// and knob turns do during the fade, and SIGHUP. Restarts are in
/// `SleepTimerRestartTests`.
@Suite struct SleepTimerTests {
    /// A speaker playing white noise, the engine having confirmed it.
    static func playing(_ configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = Harness(configure: configure)
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"p","action":"play"}"#)
        return h
    }

    static func longFades(_ effects: [SpeakerEffect]) -> [(to: Double, overMs: Int)] {
        effects.audioRequests.compactMap { if case let .longFade(to, overMs, _) = $0 { return (to, overMs) } else { return nil } }
    }

    @Test func aTimerNeedsPlayback() {
        var h = Harness()
        h.send(.start(at: h.now))
        let refused = h.command(#"{"id":"t","action":"setSleepTimer","minutes":10}"#)
        #expect(refused.lastPublished("command/result")?["error"]?["code"] == .string("unsupported"))
        #expect(h.state.sleepTimer.running == nil)
    }

    @Test func theTimerFadesAlongTheCurveThenPausesAndTheLevelReturns() {
        var h = Self.playing()
        let set = h.command(#"{"id":"t","action":"setSleepTimer","minutes":10,"fadeSeconds":60}"#)
        #expect(set.lastPublished("command/result")?["fadeSeconds"] == .number(60))
        let timer = set.lastPublished("session")?["sleepTimer"]
        #expect(timer?["minutes"] == .number(10))
        #expect(timer?["remainingSeconds"] == .number(600))
        #expect(timer?["fading"] == .bool(false))
        #expect(timer?["endsAt"] == .string(WallClockReading(seconds: 1_795_953_600 + 600, milliseconds: 123).iso8601))
        #expect(set.lastPublished("session")?["commands"]?.arrayValue?.contains(.string("cancelSleepTimer")) == true)
        #expect(h.state.sleepTimer.deadline == h.now.advanced(byMilliseconds: 540_000))

        // Nothing before endsAt − F; a minute's tick does not republish (remainingSeconds counts by itself).
        #expect(h.advance(ms: 60_000).publications.isEmpty)
        let fade = h.advance(ms: 480_000)
        #expect(Self.longFades(fade).map(\.to) == [0] && Self.longFades(fade).map(\.overMs) == [60_000])
        #expect(fade.lastPublished("session")?["sleepTimer"]?["fading"] == .bool(true))
        #expect(fade.lastPublished("session")?["sleepTimer"]?["remainingSeconds"] == .number(60))
        #expect(h.state.sleepTimer.deadline == h.now.advanced(byMilliseconds: 60_000))

        let end = h.advance(ms: 60_000)
        #expect(end.published("event").first == (try? JSONParser().parse(#"{"source":"sleepTimer","name":"ended"}"#)))
        #expect(end.audioRequests.contains(.pause(fadeMs: 400, ticket: 3)))
        #expect(Self.longFades(end).isEmpty, "the multiplier stays at 0 until the pause is done")
        let paused = h.engineDoes(end)
        #expect(Self.longFades(paused).map(\.to) == [1] && Self.longFades(paused).map(\.overMs) == [0])
        let session = paused.lastPublished("session")
        #expect(session?["sleepTimer"] == .null)
        #expect(session?["isPlaying"] == .bool(false))
        #expect(session?["ended"] == .bool(false), "paused, not ended: a press in the morning resumes")
        #expect(h.state.volume.level == .absolute(level: 0.4), "the level itself never moved")
    }

    @Test func aFadeLongerThanTheTimerIsClampedAndStartsAtOnce() {
        var h = Self.playing()
        let set = h.command(#"{"id":"t","action":"setSleepTimer","minutes":1,"fadeSeconds":300}"#)
        #expect(set.lastPublished("command/result")?["fadeSeconds"] == .number(60))
        #expect(Self.longFades(set).map(\.overMs) == [60_000])
        #expect(set.lastPublished("session")?["sleepTimer"]?["fading"] == .bool(true))
    }

    @Test func theConfigGivesTheDefaultFadeAndAReloadKeepsTheRunningTimer() {
        var h = Self.playing { $0.sleepTimer.fadeSeconds = 120 }
        let set = h.command(#"{"id":"t","action":"setSleepTimer","minutes":30}"#)
        #expect(set.lastPublished("command/result")?["fadeSeconds"] == .number(120))
        var reloaded = h.speaker.config
        reloaded.sleepTimer.fadeSeconds = 30
        h.send(.reconfigure(reloaded, at: h.now))
        #expect(h.state.sleepTimer.running?.fadeSeconds == 120, "a reload (SIGHUP) keeps the running timer as it was set")
        #expect(h.state.sleepTimer.running?.minutes == 30)
        #expect(h.speaker.config.sleepTimer.fadeSeconds == 30, "the next timer uses the new default")
    }

    @Test func cancellingDuringTheFadeRampsBackAndKeepsPlaying() {
        var h = Self.playing()
        h.command(#"{"id":"t","action":"setSleepTimer","minutes":5,"fadeSeconds":120}"#)
        h.advance(ms: 200_000)
        let cancel = h.command(#"{"id":"c","action":"cancelSleepTimer"}"#)
        #expect(Self.longFades(cancel).map(\.to) == [1] && Self.longFades(cancel).map(\.overMs) == [2000])
        #expect(!cancel.audioRequests.contains { if case .pause = $0 { return true } else { return false } })
        #expect(cancel.lastPublished("session")?["sleepTimer"] == .null)
        #expect(h.advance(ms: 600_000).published("event").isEmpty, "a cancelled timer never ends")
        #expect(h.state.transport.session.intendsPlayback)
        // Cancelling with no timer: ok, no change.
        let again = h.command(#"{"id":"c2","action":"cancelSleepTimer"}"#)
        #expect(again.lastPublished("command/result")?["ok"] == .bool(true))
        #expect(again.audioRequests.isEmpty)
    }

    @Test func settingATimerDuringTheFadeRampsBackAndRestarts() {
        var h = Self.playing()
        h.command(#"{"id":"t","action":"setSleepTimer","minutes":5,"fadeSeconds":120}"#)
        h.advance(ms: 200_000)
        #expect(h.state.sleepTimer.running?.fading == true)
        let extend = h.command(#"{"id":"t2","action":"setSleepTimer","minutes":20,"fadeSeconds":120}"#)
        #expect(Self.longFades(extend).map(\.to) == [1])
        #expect(extend.lastPublished("session")?["sleepTimer"]?["fading"] == .bool(false))
        #expect(extend.lastPublished("session")?["sleepTimer"]?["remainingSeconds"] == .number(1200))
        let nextFade = h.advance(ms: 1_080_000)
        #expect(Self.longFades(nextFade).map(\.overMs) == [120_000])
    }

    @Test func aKnobTurnOrAPressDuringTheFadeCancelsItWithoutPausing() {
        var h = Self.playing()
        h.command(#"{"id":"t","action":"setSleepTimer","minutes":5,"fadeSeconds":120}"#)
        h.advance(ms: 200_000)
        h.edge(.playPause, true)
        let down = h.advance(ms: 5)
        #expect(Self.longFades(down).map(\.to) == [1], "the press ramps back")
        #expect(!down.audioRequests.contains { if case .pause = $0 { return true } else { return false } }, "and does not pause")
        #expect(h.state.sleepTimer.running == nil)
        h.edge(.playPause, false, afterMs: 60); h.advance(ms: 40)

        // A knob turn during a new fade: cancelled, and the turn changes the volume.
        h.command(#"{"id":"t2","action":"setSleepTimer","minutes":1,"fadeSeconds":60}"#)
        var turn: [SpeakerEffect] = []
        for (line, level) in [(InputLine.encoderA, true), (.encoderB, true), (.encoderA, false), (.encoderB, false)] {
            turn += h.edge(line, level, afterMs: 5)
        }
        #expect(Self.longFades(turn).map(\.to) == [1])
        #expect(h.state.sleepTimer.running == nil)
        #expect(h.state.volume.level == .absolute(level: 0.45))
    }

    @Test func aPauseCancelsTheTimerAndTheMultiplierReturnsOnceSilent() {
        var h = Self.playing()
        h.command(#"{"id":"t","action":"setSleepTimer","minutes":5,"fadeSeconds":120}"#)
        h.advance(ms: 200_000)
        let pause = h.command(#"{"id":"z","action":"pause"}"#)
        #expect(Self.longFades(pause).isEmpty, "no swell under the pause's own fade-out")
        #expect(h.state.sleepTimer.running == nil)
        let done = h.engineDoes(pause)
        #expect(Self.longFades(done).map(\.to) == [1] && Self.longFades(done).map(\.overMs) == [0])
        #expect(done.lastPublished("session")?["sleepTimer"] == .null)
        #expect(h.command(#"{"id":"t2","action":"setSleepTimer","minutes":5}"#)
            .lastPublished("command/result")?["error"]?["code"] == .string("unsupported"))
    }

    @Test func theLongPressCyclesTheTimerAndConfirmsWithBlinksAndACue() {
        var h = Harness { $0.statusLed = StatusLedLine(line: "GPIO16") }
        h.send(.start(at: h.now))
        func hold() -> [SpeakerEffect] {
            var out = h.edge(.encoderSwitch, true)
            out += h.advance(ms: 900)
            out += h.edge(.encoderSwitch, false)
            out += h.advance(ms: 40)
            return out
        }
        // Paused: the first choice starts playback with a 15-minute timer.
        let first = hold()
        #expect(first.audioRequests.contains(.play(soundID: "white", fadeMs: 400, ticket: 1)))
        h.engineDoes(first)
        #expect(h.state.sleepTimer.running?.minutes == 15)
        #expect(first.contains(.statusLed(.blinks(1))))
        #expect(first.audioRequests.contains(.setMuted(true)), "the cue dips the stream")
        #expect(h.advance(ms: 300).audioRequests.contains(.setMuted(false)))
        for (minutes, blinks) in [(30, 2), (60, 3), (90, 4)] {
            h.advance(ms: 3000)
            let next = hold()
            #expect(h.state.sleepTimer.running?.minutes == minutes)
            #expect(next.contains(.statusLed(.blinks(blinks))))
        }
        h.advance(ms: 3000)
        let off = hold()
        #expect(h.state.sleepTimer.running == nil)
        #expect(off.contains(.statusLed(.longBlink)))
        #expect(h.state.transport.session.intendsPlayback, "off leaves it playing")
    }

    @Test func discoveryOffersTheSleepTimerEndedTrigger() throws {
        let h = Harness()
        let payload = try JSONParser().parse(h.speaker.homeAssistantDiscovery.publication.payload)
        let trigger = payload["components"]?["sleep_timer_ended"]
        #expect(trigger?["platform"] == .string("device_automation"))
        #expect(trigger?["type"] == .string("sleep_timer_ended"))
        #expect(trigger?["topic"] == .string("ambient-speaker/kitchen/event"))
        #expect(trigger?["payload"] == .string(#"{"source":"sleepTimer","name":"ended"}"#))
    }
}
