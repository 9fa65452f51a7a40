// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import SpeakerCore
import SpeakerProtocol

/// A sleep timer across a restart (or a kill -9, or a power cut): the state
/// file keeps its wall-clock end; on start the time left is measured against
/// the wall clock when it was and is synchronised, else the timer counts as
/// ended and playback does not resume.
@Suite struct SleepTimerRestartTests {
    static let savedAt = WallClockReading(seconds: 1_795_953_600, milliseconds: 123)

    /// A speaker started from `restored` with the wall clock at `wall`.
    static func restarted(_ restored: PersistedState, wall: WallClockReading, synced: Bool) -> (Harness, [SpeakerEffect]) {
        var h = Harness()
        let env = SpeakerEnvironment(wallClock: { wall }, clockSynced: { synced }, newSessionID: { "session-r" },
                                     software: "ambient-speaker test", randomInt: { $0.lowerBound })
        h.speaker = Speaker(config: h.speaker.config, catalog: Harness.catalog, environment: env,
                            revisionReservation: 100, epoch: "e1", restored: restored)
        let start = h.send(.start(at: h.now))
        return (h, start)
    }

    /// What the state file holds while a 30-minute timer set at `savedAt` runs.
    static func savedWhilePlaying() throws -> PersistedState {
        var h = SleepTimerTests.playing()
        h.command(#"{"id":"t","action":"setSleepTimer","minutes":30,"fadeSeconds":300}"#)
        let saved = h.speaker.persistedSnapshot
        // Through the file format, as a restart reads it.
        return try PersistedState.decode(saved.fileBytes)
    }

    @Test func theStateFileKeepsTheTimer() throws {
        let saved = try Self.savedWhilePlaying()
        let timer = try #require(saved.sleepTimer)
        #expect(timer.minutes == 30 && timer.fadeSeconds == 300 && timer.clockSynced)
        #expect(timer.endsAt == WallClockReading(seconds: Self.savedAt.seconds + 1800, milliseconds: 123))
        #expect(String(decoding: saved.fileBytes, as: UTF8.self).contains(#""sleepTimer":{"endsAtMs":1795955400123"#))
    }

    @Test func aRestartWithTimeLeftResumesPlaybackAndTheTimer() throws {
        // Killed (kill -9) 10 minutes in, back 20 s later: 19 min 40 s left.
        let wall = WallClockReading(seconds: Self.savedAt.seconds + 620, milliseconds: 123)
        var (h, start) = Self.restarted(try Self.savedWhilePlaying(), wall: wall, synced: true)
        #expect(start.audioRequests.contains(.play(soundID: "white", fadeMs: 400, ticket: 1)))
        #expect(h.state.sleepTimer.running?.endsAt == h.now.advanced(byMilliseconds: 1_180_000))
        h.engineDoes(start)
        #expect(h.speaker.state.sleepTimer.attributes?.remainingSeconds == 1180)
        let fade = h.advance(ms: 880_000)
        #expect(SleepTimerTests.longFades(fade).map(\.overMs) == [300_000])
        let end = h.advance(ms: 300_000)
        #expect(end.published("event").count == 1)
    }

    @Test func aRestartInsideTheFadeFadesOverTheTimeLeft() throws {
        let wall = WallClockReading(seconds: Self.savedAt.seconds + 1700, milliseconds: 123)
        let (_, start) = Self.restarted(try Self.savedWhilePlaying(), wall: wall, synced: true)
        #expect(SleepTimerTests.longFades(start).map(\.overMs) == [100_000])
    }

    @Test func aTimerThatEndedWhileTheSpeakerWasDownDoesNotStartPlayback() throws {
        let wall = WallClockReading(seconds: Self.savedAt.seconds + 4 * 3600, milliseconds: 0)
        let (h, start) = Self.restarted(try Self.savedWhilePlaying(), wall: wall, synced: true)
        #expect(!start.audioRequests.contains { if case .play = $0 { return true } else { return false } })
        #expect(h.state.sleepTimer.running == nil)
        #expect(!h.state.transport.session.intendsPlayback)
        #expect(start.contains { if case .log(_, let m) = $0 { return m.contains("ended while the speaker was down") } else { return false } })
    }

    @Test func anUnsynchronisedClockAfterAPowerCutCountsTheTimerAsEnded() throws {
        // A Pi without an RTC boots with its clock at the last saved time: the gap is unknown.
        let (h, start) = Self.restarted(try Self.savedWhilePlaying(), wall: Self.savedAt, synced: false)
        #expect(!start.audioRequests.contains { if case .play = $0 { return true } else { return false } })
        #expect(h.state.sleepTimer.running == nil)
        #expect(start.contains { if case .log(_, let m) = $0 { return m.contains("not synchronised") } else { return false } })
    }

    @Test func aBadTimerInTheStateFileIsRefusedNamingTheField() {
        let bytes = Array(#"{"version":1,"soundID":"white","intendsPlayback":true,"sleepTimer":{"endsAtMs":1,"minutes":0,"fadeSeconds":1,"clockSynced":true}}"#.utf8)
        #expect(throws: PersistedState.DecodeError.self) { try PersistedState.decode(bytes) }
        do { _ = try PersistedState.decode(bytes) } catch { #expect(error.reason.contains("sleepTimer.minutes")) }
    }
}

/// Mute: software silence in every mode, the level kept; the gestures.
@Suite struct MuteTests {
    @Test func muteAndUnmuteAreIdempotentAndPublished() {
        var h = SleepTimerTests.playing()
        let mute = h.command(#"{"id":"m","action":"mute"}"#)
        #expect(mute.audioRequests == [.setMuted(true)])
        #expect(mute.lastPublished("device")?["muted"] == .bool(true))
        #expect(mute.lastPublished("session")?["commands"]?.arrayValue?.contains(.string("unmute")) == true)
        #expect(mute.lastPublished("session")?["commands"]?.arrayValue?.contains(.string("mute")) == false)
        let again = h.command(#"{"id":"m2","action":"mute"}"#)
        #expect(again.audioRequests.isEmpty)
        #expect(again.lastPublished("command/result")?["ok"] == .bool(true))
        let unmute = h.command(#"{"id":"u","action":"unmute"}"#)
        #expect(unmute.audioRequests == [.setMuted(false)])
        #expect(h.state.volume.level == .absolute(level: 0.4))
    }

    @Test func onAStepOnlyAmpMuteIsSoftwareSilenceAndNoPulse() {
        var h = Harness { $0.volume.mode = .gpioStep }
        h.send(.start(at: h.now))
        let mute = h.command(#"{"id":"m","action":"mute"}"#)
        #expect(mute.audioRequests == [.setMuted(true)])
        #expect(!mute.contains { if case .amp = $0 { return true } else { return false } })
        #expect(mute.lastPublished("device")?["volume"] == (try? JSONParser().parse(#"{"control":"relative"}"#)))
        #expect(mute.lastPublished("device")?["muted"] == .bool(true))
    }

    @Test func aDoublePressMutesAndAKnobTurnUnmutes() {
        var h = Harness { $0.inputs.doublePressMs = 300 }
        h.send(.start(at: h.now))
        h.edge(.encoderSwitch, true); h.advance(ms: 40)
        h.edge(.encoderSwitch, false, afterMs: 60); h.advance(ms: 40)
        h.edge(.encoderSwitch, true, afterMs: 60); h.advance(ms: 40)
        h.edge(.encoderSwitch, false, afterMs: 60)
        let double = h.advance(ms: 40)
        #expect(double.audioRequests.contains(.setMuted(true)))
        #expect(h.state.mute.muted)
        var turn: [SpeakerEffect] = []
        for (line, level) in [(InputLine.encoderA, true), (.encoderB, true), (.encoderA, false), (.encoderB, false)] {
            turn += h.edge(line, level, afterMs: 5)
        }
        #expect(turn.audioRequests.contains(.setMuted(false)))
        #expect(!h.state.mute.muted)
    }
}

/// The status LED's pattern, chosen by the core.
@Suite struct StatusLightTests {
    static func leds(_ effects: [SpeakerEffect]) -> [StatusLedPattern] {
        effects.compactMap { if case .statusLed(let p) = $0 { return p } else { return nil } }
    }

    @Test func idlePlayingTimerAndProblemEachHaveTheirPattern() {
        var h = Harness { $0.statusLed = StatusLedLine(line: "GPIO16") }
        let start = h.send(.start(at: h.now))
        #expect(Self.leds(start) == [.off])
        h.send(.mqttConnected(at: h.now))
        #expect(Self.leds(h.commandDone(#"{"id":"p","action":"play"}"#)) == [.on])
        #expect(Self.leds(h.command(#"{"id":"t","action":"setSleepTimer","minutes":10}"#)) == [.breathing])
        #expect(Self.leds(h.send(.engine(.unavailable(reason: "gone"), at: h.now))) == [.fastBlink])
        #expect(Self.leds(h.send(.engine(.available, at: h.now))).last == .breathing)
        #expect(Self.leds(h.advance(ms: 100)).isEmpty, "no change, nothing sent")
    }

    @Test func theBrokerCountsAsAProblemAfterAMinute() {
        var h = Harness { $0.statusLed = StatusLedLine(line: "GPIO16") }
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        h.send(.mqttDisconnected(at: h.now))
        #expect(h.state.statusLight.deadline == h.now.advanced(byMilliseconds: 60_000))
        #expect(Self.leds(h.advance(ms: 59_000)).isEmpty)
        #expect(Self.leds(h.advance(ms: 1_000)) == [.fastBlink])
        #expect(h.state.statusLight.deadline == nil, "no busy ticks once shown")
        #expect(Self.leds(h.send(.mqttConnected(at: h.now))) == [.off])
    }

    @Test func withoutAnLEDNothingIsSent() {
        var h = Harness()
        #expect(Self.leds(h.send(.start(at: h.now))).isEmpty)
    }
}
