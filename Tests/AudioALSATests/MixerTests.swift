// SPDX-License-Identifier: Apache-2.0
import Testing
import AudioALSA
#if canImport(Glibc)
import Glibc
#endif

/// The alsa-mixer volume: the level↔dB map (pure), and the adapter's failure
/// path against real alsa-lib. Driving a real element needs a sound card:
/// the HIL suite does it on snd-dummy's "Master" (Tests/HIL/guest/mixer.sh).
@Suite struct MixerTests {
    @Test func levelsMapToDBOnTheSoftwareCurveAndBack() {
        let map = MixerLevelMap(minDB: -102.4, maxDB: 0)
        #expect(map.db(level: 1) == 0)
        #expect(map.db(level: 0.5) == -25)
        #expect(map.db(level: 0) == nil)
        #expect(map.level(db: nil) == 0)
        for level in stride(from: 0.05, through: 1.0, by: 0.05) {
            #expect(abs(map.level(db: map.db(level: level)) - level) < 1e-9)
        }
    }

    @Test func shortElementRangeClampsAtItsBottom() {
        // snd-dummy's elements span −45…0 dB.
        let map = MixerLevelMap(minDB: -45, maxDB: 0)
        #expect(map.db(level: 0.05) == -45)
        #expect(map.level(db: -45) == 0.1)
        #expect(map.db(level: 0.4) == -30)
    }

    @Test func elementTopAboveZeroIsLevelOne() {
        let map = MixerLevelMap(minDB: -40, maxDB: 6)
        #expect(map.db(level: 1) == 6)
        #expect(map.level(db: 6) == 1)
        #expect(map.level(db: -19) == 0.5)
    }

    @Test func missingCardFailsNamingCardAndCall() {
        #expect {
            _ = try ALSAMixer(card: "hw:CARD=NoSuchAmbienceCard", element: "PCM")
        } throws: { error in
            guard let e = error as? ALSAError else { return false }
            return e.function == "snd_mixer_attach" && e.description.contains("NoSuchAmbienceCard") && e.description.contains("PCM")
        }
    }
}
