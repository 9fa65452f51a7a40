// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience
#if canImport(Glibc)
import Glibc
#endif

/// Transport fades, crossfades, gain ramps and S16 conversion of AmbienceRenderer.
@Suite struct RendererTests {
    @Test func fadeInIsMonotonicAndReachesFullLevel() {
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 512)
        #expect(r.isSilent)
        r.play(ConstantSource(0.5), fadeFrames: 4800)
        let (out, outcome) = r.floats(6000)
        #expect(!outcome.isSilent)
        let left = Spectrum.channel(out, 0)
        for i in 1..<left.count { #expect(left[i] >= left[i - 1], "envelope dips at \(i)"); if left[i] < left[i - 1] { break } }
        #expect(left[0] < 0.01)
        #expect(abs(left[2400] - 0.25) < 0.01, "midpoint \(left[2400])")
        #expect(left[4800] == 0.5 && left[5999] == 0.5)
    }

    @Test func pauseEndsInExactZerosAndResumeKeepsSource() {
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
        r.play(PinkNoise(), fadeFrames: 0)
        _ = r.floats(2000)
        r.pause(fadeFrames: 4800)
        let (fading, outcome) = r.floats(4800)
        #expect(outcome.fadeOutCompleted && outcome.isSilent)
        #expect(Spectrum.peak(Array(fading.suffix(20))) < 1e-3)
        #expect(Spectrum.peak(Array(fading.prefix(200))) > 0.01)
        let (after, later) = r.floats(3000)
        #expect(after.allSatisfy { $0 == 0 })
        #expect(later.isSilent && !later.fadeOutCompleted)
        #expect(r.takeRetired() == nil, "pause must keep the source")
        r.play(nil, fadeFrames: 100)
        let (resumed, _) = r.floats(1000)
        #expect(Spectrum.peak(Array(resumed.suffix(200))) > 0.01)
    }

    @Test func crossfadeHasNoJumpsAndRetiresTheOldSource() {
        // Two constants of opposite sign: any discontinuity shows directly.
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1000)
        let old = ConstantSource(0.5)
        r.play(old, fadeFrames: 0)
        _ = r.floats(100)
        r.crossfade(to: ConstantSource(-0.5), frames: 4800)
        let (out, outcome) = r.floats(6000)
        let left = Spectrum.channel(out, 0)
        #expect(Spectrum.maxJump(left) < 3.0 / 4800, "jump \(Spectrum.maxJump(left))")
        #expect(left.last == -0.5)
        #expect(outcome.retiredPending == 1)
        #expect(r.takeRetired() === old)
        #expect(r.takeRetired() == nil)
    }

    @Test func crossfadeBetweenNoisesStaysWithinMaterialJumps() {
        let material = max(
            Spectrum.maxJump(Spectrum.channel(Spectrum.render(PinkNoise(seed: 1), frames: 96_000), 0)),
            Spectrum.maxJump(Spectrum.channel(Spectrum.render(BrownNoise(sampleRate: 48_000, seed: 2), frames: 96_000), 0)))
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
        r.play(PinkNoise(seed: 1), fadeFrames: 0)
        let (before, _) = r.floats(24_000)
        r.crossfade(to: BrownNoise(sampleRate: 48_000, seed: 2), frames: 24_000)
        let (during, _) = r.floats(48_000)
        let left = Spectrum.channel(before + during, 0)
        #expect(Spectrum.maxJump(left) <= material * 1.1, "jump \(Spectrum.maxJump(left)) vs material \(material)")
    }

    @Test func crossfadeIsEqualPower() {
        // Uncorrelated sources at the midpoint: each at −3 dB, so the power is the mean.
        let pink = Spectrum.rms(Spectrum.channel(Spectrum.render(PinkNoise(seed: 3), frames: 48_000), 0))
        let white = Spectrum.rms(Spectrum.channel(Spectrum.render(WhiteNoise(seed: 4), frames: 48_000), 0))
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
        r.play(PinkNoise(seed: 3), fadeFrames: 0)
        r.crossfade(to: WhiteNoise(seed: 4), frames: 48_000)
        let (during, _) = r.floats(48_000)
        let mid = Spectrum.rms(Array(Spectrum.channel(during, 0)[21_000..<27_000]))
        let expected = ((pink * pink + white * white) / 2).squareRoot()
        #expect(abs(20 * log10(mid / expected)) < 1.0, "mid \(mid) vs expected \(expected)")
    }

    @Test func crossfadeWhilePausedReplaces() {
        let r = AmbienceRenderer(sampleRate: 48_000)
        let first = ConstantSource(0.25)
        r.crossfade(to: first, frames: 1000)
        r.crossfade(to: ConstantSource(0.75), frames: 1000)
        #expect(r.takeRetired() === first)
        r.play(nil, fadeFrames: 0)
        #expect(r.floats(10).samples.allSatisfy { $0 == 0.75 })
    }

    @Test func rapidCrossfadesNeverLoseOrFreeSources() {
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 256)
        r.play(ConstantSource(0), fadeFrames: 0)
        var retired = 0
        for i in 0..<20 {
            r.crossfade(to: ConstantSource(Float(i) / 20), frames: 2000)
            _ = r.floats(100)
            while r.takeRetired() != nil { retired += 1 }
        }
        _ = r.floats(3000)
        while r.takeRetired() != nil { retired += 1 }
        #expect(retired == 20)
    }

    @Test func gainRampHasNoJumpsEvenWhenRetargetedMidRamp() {
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 512)
        r.play(ConstantSource(0.5), fadeFrames: 0)
        r.setGain(0.1, rampFrames: 480)
        let (a, _) = r.floats(240)
        r.setGain(1.0, rampFrames: 480)  // a knob spinning the other way mid-ramp
        let (b, _) = r.floats(1000)
        let left = Spectrum.channel(a + b, 0)
        #expect(abs(left[0] - 0.5) < 0.002)
        #expect(Spectrum.maxJump(left) < 0.002, "jump \(Spectrum.maxJump(left))")
        #expect(left.last == 0.5)
        #expect(r.currentGain == 1.0)
    }

    @Test func int16OutputIsClampedAndRounded() {
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 64)
        r.play(ConstantSource(2), fadeFrames: 0)
        var out = [Int16](repeating: 1, count: 2 * 200)
        out.withUnsafeMutableBufferPointer { _ = r.render(into: $0.baseAddress!, frames: 200) }
        #expect(out.allSatisfy { $0 == 32767 })
        r.setGain(0.25, rampFrames: 0)
        out.withUnsafeMutableBufferPointer { _ = r.render(into: $0.baseAddress!, frames: 200) }
        #expect(out.allSatisfy { $0 == 16384 })  // 0.5 · 32767 = 16383.5 → 16384
    }

    @Test func offlineRenderMatchesFrameCount() {
        var frames = 0
        OfflineRender.render(source: WhiteNoise(), sampleRate: 48_000, frames: 10_000, chunkFrames: 4096) { frames += $0.count / 2 }
        #expect(frames == 10_000)
        let bench = OfflineRender.renderPinkForBenchmark(seconds: 0.5)
        #expect(bench.frames == 24_000 && bench.checksum > 0)
    }
}
