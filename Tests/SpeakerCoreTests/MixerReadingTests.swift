// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// `alsa-mixer`: the element notifies every change, the speaker's own writes
/// too. The audio service reports every reading; the core decides which one
/// is a change made elsewhere.
@Suite struct MixerReadingTests {
    @Test func ownWritesAndTheirEchoesChangeNothingAChangeElsewhereIsAdopted() {
        var h = Harness { $0.volume.mode = .alsaMixer }
        h.send(.start(at: h.now))
        // The write's read-back, then the element's change notification for it.
        #expect(h.send(.engine(.mixerReading(db: -20.25, level: 0.6, ownWrite: true), at: h.now)) == [])
        #expect(h.send(.engine(.mixerReading(db: -20.251, level: 0.6, ownWrite: false), at: h.now)) == [], "an echo, within 0.005 dB")
        let before = h.state.volume.level
        // alsamixer moves it.
        let fx = h.send(.engine(.mixerReading(db: -10, level: 0.8, ownWrite: false), at: h.now))
        #expect(fx.first == .log(.info, "volume: mixer moved elsewhere to -10.0 dB (level 0.8)"))
        #expect(h.state.volume.level == .absolute(level: 0.8) && h.state.volume.level != before)
        #expect(fx.lastPublished("device")?["volume"]?["level"] == .number(0.8))
        #expect(fx.audioRequests.isEmpty, "never written back")
        // Muted elsewhere, then its echo.
        let muted = h.send(.engine(.mixerReading(db: nil, level: 0, ownWrite: false), at: h.now))
        #expect(muted.first == .log(.info, "volume: mixer moved elsewhere to mute (level 0.0)"))
        #expect(h.send(.engine(.mixerReading(db: nil, level: 0, ownWrite: false), at: h.now)) == [])
    }
}
