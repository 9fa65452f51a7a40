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
        let fx = h.send(.engine(.levelChangedOutside(level: 0.7), at: h.now))
        #expect(fx.audioRequests.isEmpty, "the mixer already is there; writing it back would fight alsamixer")
        #expect(h.state.volume == .absolute(level: 0.7))
        #expect(fx.lastPublished("device")?["volume"]?["level"] == .number(0.7))
        #expect(fx.lastPublished("session") != nil)
        // The knob continues from the adopted level.
        let step = h.command(#"{"id":"u","action":"volumeUp"}"#)
        #expect(step.audioRequests == [.setLevel(0.75)])
    }

    @Test func levelAboveMaxLevelIsTurnedBackDown() {
        var h = Harness {
            $0.volume.mode = .alsaMixer
            $0.volume.maxLevel = 0.6
        }
        h.send(.start(at: h.now))
        let fx = h.send(.engine(.levelChangedOutside(level: 0.9), at: h.now))
        #expect(fx.audioRequests == [.setLevel(0.6)])
        #expect(h.state.volume == .absolute(level: 0.6))
    }

    @Test func stepOnlyHardwareIgnoresOutsideLevels() {
        var h = Harness { $0.volume.mode = .gpioStep }
        h.send(.start(at: h.now))
        let fx = h.send(.engine(.levelChangedOutside(level: 0.9), at: h.now))
        #expect(fx.audioRequests.isEmpty && fx.publications.isEmpty)
        #expect(h.state.volume == .relative)
    }
}
