// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// What the audio output tells the core beyond transport: underruns and a
/// level moved outside the speaker (alsa-mixer mode).
@Suite struct AudioOutputTests {
    @Test func underrunsArePublishedInDeviceAndSession() {
        var h = Harness()
        h.send(.start(at: h.now))
        let fx = h.send(.engine(.underruns(total: 3), at: h.now))
        #expect(fx.lastPublished("device")?["underruns"] == .number(3))
        let devices = fx.lastPublished("session")?["devices"]
        #expect(devices == .array([fx.lastPublished("device")!]))
        #expect(h.send(.engine(.underruns(total: 3), at: h.now)).publications.isEmpty)
    }

    @Test func levelMovedOnTheMixerIsAdoptedAndPublishedWithoutEchoingIt() {
        var h = Harness { $0.volume.mode = .alsaMixer }
        h.send(.start(at: h.now))
        let fx = h.send(.engine(.mixerReading(db: -7.5, level: 0.7, ownWrite: false), at: h.now))
        #expect(fx.audioRequests.isEmpty, "the mixer already is there; writing it back would fight alsamixer")
        #expect(h.state.volume.level == .absolute(level: 0.7))
        #expect(fx.lastPublished("device")?["volume"]?["level"] == .number(0.7))
        #expect(fx.lastPublished("session") != nil)
        // The knob continues from the adopted level.
        let step = h.command(#"{"id":"u","action":"volumeUp"}"#)
        #expect(step.mixerLevels == [0.75])
        #expect(step.lastPublished("command/result")?.jsonText == #"{"id":"u","ok":true,"revision":3,"level":0.75}"#)
    }

    @Test func levelAboveMaxLevelIsTurnedBackDown() {
        var h = Harness {
            $0.volume.mode = .alsaMixer
            $0.volume.maxLevel = 0.6
        }
        h.send(.start(at: h.now))
        let fx = h.send(.engine(.mixerReading(db: -2.5, level: 0.9, ownWrite: false), at: h.now))
        #expect(fx.mixerLevels == [0.6])
        #expect(h.state.volume.level == .absolute(level: 0.6))
        #expect(fx.published("device").compactMap { $0["volume"]?["level"] } == [.number(0.6)], "0.9 was never published")
    }

    /// A failed mixer write is answered with an error, and only the level the
    /// mixer really has is published: never the new level with an `ok` result
    /// (state the hardware does not have).
    @Test func aFailedMixerWriteIsAnsweredWithAnErrorAndPublishesOnlyTheTrueLevel() {
        var h = Harness { $0.volume.mode = .alsaMixer }
        h.send(.start(at: h.now))
        h.mixerFailure = ("snd_mixer_selem_set_playback_dB_all failed: Input/output error (-5)", 0.4)
        let fx = h.command(#"{"id":"v","action":"setVolume","level":0.8}"#)
        #expect(fx.mixerLevels == [0.8])
        #expect(fx.lastPublished("command/result")?["ok"] == .bool(false))
        #expect(fx.lastPublished("command/result")?["error"]?["code"] == .string("audio-unavailable"))
        #expect(fx.published("command/result").count == 1)
        #expect(fx.published("device").isEmpty && fx.published("session").isEmpty, "the level did not change: nothing to publish")
        #expect(h.state.volume.level == .absolute(level: 0.4))
        #expect(fx.contains { if case .log(.error, let t) = $0 { return t.contains("did not take level 0.8") } else { return false } })

        // The element ended somewhere else (a partial write): that is published as the truth.
        h.mixerFailure = ("snd_mixer_selem_set_playback_dB_all failed: Input/output error (-5)", 0.55)
        let partial = h.command(#"{"id":"w","action":"volumeUp"}"#)
        #expect(partial.lastPublished("command/result")?["error"]?["code"] == .string("audio-unavailable"))
        #expect(partial.lastPublished("device")?["volume"]?["level"] == .number(0.55))
        #expect(partial.lastPublished("session")?["devices"]?.arrayFirst?["volume"]?["level"] == .number(0.55))

        // The knob on a failing mixer publishes no invented level either.
        var knob: [SpeakerEffect] = []
        h.mixerFailure = ("unplugged", 0.55)
        for e in QuadratureDecoderTests.cycle(clockwise: true) { knob += h.edge(e.phaseA ? .encoderA : .encoderB, e.level, afterMs: 3) }
        #expect(knob.mixerLevels == [0.6] && knob.published("device").isEmpty)

        h.mixerFailure = nil
        let ok = h.command(#"{"id":"x","action":"setVolume","level":0.3}"#)
        #expect(ok.lastPublished("device")?["volume"]?["level"] == .number(0.3))
        #expect(ok.lastPublished("command/result")?["ok"] == .bool(true))
        #expect(ok.lastPublished("command/result")?["level"] == .number(0.3))
    }

    @Test func theResultWaitsForTheMixerConfirmation() {
        var h = Harness { $0.volume.mode = .alsaMixer }
        h.send(.start(at: h.now))
        let asked = h.speaker.reduce(.command(IncomingCommand(payload: Array(#"{"id":"m","action":"setVolume","level":0.2}"#.utf8)), at: h.now))
        #expect(asked.published("command/result").isEmpty && asked.published("device").isEmpty)
        guard case .setMixerLevel(0.2, let ticket)? = asked.audioRequests.first else {
            Issue.record("no mixer write: \(asked.audioRequests)")
            return
        }
        #expect(h.state.volume.level == .absolute(level: 0.4), "not the speaker's level until confirmed")
        let done = h.send(.engine(.levelSet(ticket: ticket), at: h.now))
        #expect(done.lastPublished("device")?["volume"]?["level"] == .number(0.2))
        #expect(done.lastPublished("command/result")?["level"] == .number(0.2))
    }

    @Test func stepOnlyHardwareIgnoresOutsideLevels() {
        var h = Harness { $0.volume.mode = .gpioStep }
        h.send(.start(at: h.now))
        let fx = h.send(.engine(.mixerReading(db: -2.5, level: 0.9, ownWrite: false), at: h.now))
        #expect(fx.audioRequests.isEmpty && fx.publications.isEmpty)
        #expect(h.state.volume.level == .relative)
    }
}
