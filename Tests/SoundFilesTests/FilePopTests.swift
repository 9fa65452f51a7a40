// SPDX-License-Identifier: Apache-2.0
import Testing
import CSndfile
import Ambience
@testable import SoundFiles

/// No pops with file sounds: play (fade in), pause (fade out), crossfades
/// file ↔ generated noise and file ↔ file, across loop points, through the
/// same renderer the player uses. No sample-to-sample jump may exceed the
/// largest jump of the material itself.
@Suite struct FilePopTests {
    /// A 1.5 s 44.1 kHz mono FLAC of low-passed noise (so its own jumps are
    /// small and a click would stand out), resampled and looped.
    static func makeFile(_ f: SoundFixture, name: String, seed: UInt64) -> String {
        var y: Float = 0
        var samples: [Float] = []
        for i in 0..<66_150 {
            y += 0.05 * (noise(i, 0, seed: seed, amplitude: 1) - y)
            samples.append(y * 2)
        }
        return f.write(name, format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), rate: 44_100, channels: 1, frames: samples.count) { i, _ in samples[i] }
    }

    @Test func playPauseCrossfadesAndLoopsStayWithinTheMaterialsJumps() throws {
        let f = SoundFixture(name: "pops")
        let a = Self.makeFile(f, name: "a.flac", seed: 5)
        let b = Self.makeFile(f, name: "b.flac", seed: 9)
        // The material's own largest jump, as the player renders it (resampled, headroom).
        let plain = try FileSound(path: a, sampleRate: 48_000, streamer: nil)
        let materialA = maxJump(channel(renderSource(plain.render, frames: 60_000), 0))
        let plainB = try FileSound(path: b, sampleRate: 48_000, streamer: nil)
        let materialB = maxJump(channel(renderSource(plainB.render, frames: 60_000), 0))
        let pinkJump = maxJump(channel(renderSource(PinkNoise(seed: 2).render, frames: 96_000), 0))

        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
        var out: [Float] = []
        func run(_ frames: Int) { out += channel(renderSource({ _ = r.renderFloat(into: $0, frames: $1) }, frames: frames), 0) }
        r.play(try FileSound(path: a, sampleRate: 48_000, streamer: nil), fadeFrames: 19_200)
        run(200_000)  // fade in, then several loop points of a (1.5 s file → loop every ~1.1 s)
        r.crossfade(to: try FileSound(path: b, sampleRate: 48_000, streamer: nil), frames: 72_000)
        run(150_000)
        r.pause(fadeFrames: 19_200)
        run(30_000)
        #expect(r.isSilent)
        r.play(nil, fadeFrames: 19_200)
        run(30_000)
        r.crossfade(to: PinkNoise(seed: 2), frames: 72_000)
        run(100_000)
        let material = max(materialA, materialB)
        // Outside the a → b crossfade (frames 200,000..<272,000) a jump is one
        // material's; inside it, an equal-power mix a·cos t + b·sin t of two
        // independent materials, whose jumps reach √(jumpA² + jumpB²) at most.
        let fileJump = max(maxJump(Array(out[0..<200_000])), maxJump(Array(out[272_000..<380_000])))
        let mixSection = Array(out[199_999..<272_001])
        let mixBound = (materialA * materialA + materialB * materialB).squareRoot()
        #expect(fileJump <= material * 1.1, "file sections: jump \(fileJump) vs material \(material)")
        #expect(maxJump(mixSection) <= mixBound * 1.05, "a → b crossfade: jump \(maxJump(mixSection)) vs \(mixBound)")
        #expect(maxJump(out) <= max(material, pinkJump) * 1.1, "jump \(maxJump(out)) vs material \(max(material, pinkJump))")
        #expect(abs(out[0]) < 1e-3, "starts from silence")
        while r.takeRetired() != nil {}
    }

    @Test func fileAtFullLevelHasHeadroomAndNoDC() throws {
        // A full-scale square-ish file: played at level 1.0 it must not clip.
        let f = SoundFixture(name: "headroom")
        let p = f.write("loud.wav", format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), rate: 48_000, channels: 2, frames: 48_000) { i, _ in
            (i / 100) % 2 == 0 ? 0.99 : -0.99
        }
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
        r.setGain(VolumeCurve.gain(level: 1), rampFrames: 0)
        r.play(try FileSound(path: p, sampleRate: 48_000, streamer: nil), fadeFrames: 0)
        let out = channel(renderSource({ _ = r.renderFloat(into: $0, frames: $1) }, frames: 150_000), 0)
        #expect(out.allSatisfy { abs($0) < 1 }, "peak \(out.map(abs).max()!)")
        let mean = out.reduce(0, +) / Float(out.count)
        #expect(abs(mean) < 0.01, "DC \(mean)")
    }
}
