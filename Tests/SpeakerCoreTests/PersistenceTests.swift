// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// Persistence in the core: what is saved, when (rate limit), what is
/// restored, and SIGHUP's live reconfiguration.
@Suite struct PersistenceTests {
    /// A harness whose speaker starts from `restored` (as loaded from disk).
    func harness(restored: PersistedState?, configure: (inout SpeakerConfig) -> Void = { _ in }) -> Harness {
        var h = Harness(configure: configure)
        let env = SpeakerEnvironment(wallClock: { WallClockReading(seconds: 1_795_953_600, milliseconds: 0) },
                                     clockSynced: { true }, newSessionID: { "restored-session" }, software: "test")
        h.speaker = Speaker(config: h.speaker.config, catalog: Harness.catalog, environment: env,
                            revisionReservation: 0, epoch: "e1", restored: restored)
        return h
    }

    /// Delivers the timer ticks the runtime would deliver up to `now` (the core's deadlines).
    func tickDeadlines(_ h: inout Harness, until now: MonotonicInstant) -> [SpeakerEffect] {
        var fx: [SpeakerEffect] = []
        while let due = h.speaker.nextDeadline, due <= now { fx += h.send(.tick(due)) }
        return fx
    }

    func saves(_ fx: [SpeakerEffect]) -> [PersistedState] {
        fx.compactMap { if case .saveState(let s) = $0 { return s } else { return nil } }
    }

    @Test func aFreshDeviceWritesItsDefaultsOnceAfterTheSettleTime() {
        var h = Harness()
        #expect(saves(h.send(.start(at: h.now))).isEmpty)
        #expect(h.speaker.nextDeadline == h.now.advanced(byMilliseconds: StateSaveSchedule.settleMs))
        #expect(saves(h.advance(ms: 499)).isEmpty)
        #expect(saves(h.advance(ms: 1)) == [PersistedState(soundID: "white", level: 0.4, intendsPlayback: false)])
        #expect(saves(h.advance(ms: 10_000)).isEmpty, "nothing changed, nothing written")
    }

    @Test func aKnobSpinWritesAtMostOncePerIntervalAndEndsWithTheFinalLevel() {
        var h = harness(restored: PersistedState(soundID: "white", level: 0.4, intendsPlayback: false))
        var fx = h.send(.start(at: h.now))
        let start = h.now
        var detents = 0
        // 10 s of spinning, one detent every 48 ms, 10 up then 10 down, repeatedly: ~200 level changes.
        for i in 0..<208 {
            let clockwise = (i / 10) % 2 == 0
            for e in QuadratureDecoderTests.cycle(clockwise: clockwise) {
                fx += tickDeadlines(&h, until: h.now.advanced(byMilliseconds: 12))
                fx += h.edge(e.phaseA ? .encoderA : .encoderB, e.level, afterMs: 12)
            }
            detents += 1
        }
        let spinMs = Int(h.now.nanoseconds(since: start) / 1_000_000)
        fx += tickDeadlines(&h, until: h.now.advanced(byMilliseconds: 5_000))
        let written = saves(fx)
        #expect(detents == 208 && fx.audioRequests.filter { if case .setLevel = $0 { true } else { false } }.count > 150)
        #expect(written.count <= spinMs / StateSaveSchedule.minIntervalMs + 2, "\(written.count) writes in \(spinMs) ms")
        #expect(written.count >= spinMs / StateSaveSchedule.minIntervalMs - 1, "a long spin still saves regularly")
        #expect(written.last?.level == h.state.volume.level.levelValue, "the last write holds the final level")
    }

    @Test func intentIsSavedAndAShutdownFlushesWhatIsPending() {
        var h = harness(restored: PersistedState(soundID: "white", level: 0.4, intendsPlayback: false))
        h.send(.start(at: h.now))
        let play = h.commandDone(#"{"id":"p","action":"select","soundID":"brown"}"#)
        #expect(saves(play).isEmpty, "rate-limited: not written at once")
        let flushed = saves(h.send(.shutdown(at: h.now.advanced(byMilliseconds: 10))))
        #expect(flushed == [PersistedState(soundID: "brown", level: 0.4, intendsPlayback: true)])
        #expect(saves(h.send(.shutdown(at: h.now.advanced(byMilliseconds: 20)))).isEmpty, "nothing left to write")
    }

    @Test func aChangeUndoneBeforeTheDeadlineWritesNothing() {
        var h = harness(restored: PersistedState(soundID: "white", level: 0.4, intendsPlayback: false))
        h.send(.start(at: h.now))
        h.command(#"{"id":"u","action":"volumeUp"}"#)
        h.command(#"{"id":"d","action":"volumeDown"}"#)
        #expect(saves(h.advance(ms: 5_000)).isEmpty)
    }

    @Test func restoringSelectsTheSoundSetsTheLevelAndResumes() {
        var h = harness(restored: PersistedState(soundID: "pink", level: 0.7, intendsPlayback: true))
        let fx = h.send(.start(at: h.now))
        #expect(fx.audioRequests == [.setLevel(0.7), .play(soundID: "pink", fadeMs: 400, ticket: 1)])
        #expect(h.state.transport.session.intendsPlayback)
        #expect(saves(h.advance(ms: 10_000)).isEmpty, "the restored state is what is on disk")
    }

    @Test func resumeOnBootFalseRestoresSoundAndLevelButStaysQuiet() {
        var h = harness(restored: PersistedState(soundID: "brown", level: 0.2, intendsPlayback: true)) {
            $0.session.resumeOnBoot = false
        }
        let fx = h.send(.start(at: h.now))
        #expect(fx.audioRequests == [.setLevel(0.2)])
        #expect(h.state.transport.selectedSound.id == "brown" && !h.state.transport.session.intendsPlayback)
        #expect(saves(h.advance(ms: 600)) == [PersistedState(soundID: "brown", level: 0.2, intendsPlayback: false)])
    }

    @Test func aRestoredLevelIsClampedAndAnUnknownSoundFallsBack() {
        var h = harness(restored: PersistedState(soundID: "gone", level: 0.9, intendsPlayback: false)) {
            $0.volume.maxLevel = 0.6
        }
        let fx = h.send(.start(at: h.now))
        #expect(fx.audioRequests == [.setLevel(0.6)])
        #expect(h.state.transport.selectedSound.id == "white")
        #expect(fx.contains { if case .log(.warning, let m) = $0 { m.contains("\"gone\"") } else { false } })
    }

    @Test func stepOnlyHardwareNeverSavesALevel() {
        var h = harness(restored: PersistedState(soundID: "pink", level: 0.5, intendsPlayback: false)) {
            $0.volume.mode = .gpioStep
        }
        var fx = h.send(.start(at: h.now))
        #expect(h.state.volume.level == .relative)
        fx += h.command(#"{"id":"u","action":"volumeUp","steps":3}"#)
        fx += h.advance(ms: 3_000)
        let written = saves(fx)
        #expect(written == [PersistedState(soundID: "pink", level: nil, intendsPlayback: false)])
        #expect(written.allSatisfy { $0.json["level"] == nil && !$0.json.jsonText.contains("level") })
    }

    @Test func theFileFormatRoundTripsAndRejectsAnythingElse() throws {
        let state = PersistedState(soundID: "rain", level: 0.45, intendsPlayback: true)
        #expect(String(decoding: state.fileBytes, as: UTF8.self) == #"{"version":1,"soundID":"rain","level":0.45,"intendsPlayback":true}"# + "\n")
        #expect(try PersistedState.decode(state.fileBytes) == state)
        let bad = ["", "{", "[]", #"{"version":2,"soundID":"a","intendsPlayback":true}"#,
                   #"{"version":1,"soundID":"","intendsPlayback":true}"#,
                   #"{"version":1,"soundID":"a","intendsPlayback":"yes"}"#,
                   #"{"version":1,"soundID":"a","level":1.5,"intendsPlayback":true}"#,
                   #"{"version":1,"soundID":"a","intendsPlayback":true,"extra":1}"#,
                   "\u{0}\u{0}\u{0}"]
        for text in bad {
            #expect(throws: PersistedState.DecodeError.self, "\(text.debugDescription)") { try PersistedState.decode(Array(text.utf8)) }
        }
    }

    @Test func reloadAppliesLiveKeysAndNamesTheOthers() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.command(#"{"id":"v","action":"setVolume","level":0.8}"#)
        var new = h.speaker.config
        new.volume.maxLevel = 0.5
        new.device.name = "Bedroom"
        new.audio.fadeMs = 100
        new.mqtt.host = "broker.lan"
        new.audio.device = "hw:1"
        let fx = h.send(.reconfigure(new, at: h.now))
        #expect(h.speaker.config.volume.maxLevel == 0.5 && h.speaker.config.device.name == "Bedroom")
        #expect(h.speaker.config.mqtt.host == "localhost" && h.speaker.config.audio.device == "default", "restart-only keys keep running values")
        #expect(fx.audioRequests == [.setLevel(0.5)], "a lower maximum clamps the level at once")
        #expect(fx.lastPublished("device")?["name"] == .string("Bedroom"))
        let logs = fx.compactMap { if case .log(_, let m) = $0 { m } else { nil } }
        #expect(logs.contains { $0.contains("applied device.name, audio.fadeMs, volume.maxLevel") }, "\(logs)")
        #expect(logs.contains { $0.contains("audio.device, mqtt.host changed but cannot change while running") }, "\(logs)")
        #expect(Speaker.changedKeys(from: h.speaker.config, to: h.speaker.config).isEmpty)
    }
}

extension VolumeState {
    var levelValue: Double? { if case .absolute(let l) = self { l } else { nil } }
}
