// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience

/// A mix is one source of up to four layers, each at its own gain: the
/// levels follow the volume curve, a level change ramps (no step bigger
/// than the ramp's slope), a switch between mixes is the renderer's
/// equal-power crossfade, and a silent layer is not rendered at all.
@Suite struct MixSourceTests {
    /// Counts its renders, so a skipped layer shows.
    final class CountingSource: SoundSource, @unchecked Sendable {
        let value: Float
        var renders = 0
        init(_ value: Float) { self.value = value }
        func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
            renders += 1
            buffer.update(repeating: value, count: 2 * frames)
        }
    }

    func render(_ s: SoundSource, _ frames: Int) -> [Float] {
        var out = [Float](repeating: .nan, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { s.render(into: $0.baseAddress!, frames: frames) }
        return out
    }

    func maxJump(_ x: [Float], channel: Int = 0) -> Float {
        var worst: Float = 0
        var i = channel + 2
        while i < x.count { worst = max(worst, abs(x[i] - x[i - 2])); i += 2 }
        return worst
    }

    @Test func layersSumAtTheirCurveGains() {
        let mix = MixSource(layers: [("a", ConstantSource(0.5), 1), ("b", ConstantSource(0.25), 0.5)], rampFrames: 4800)
        let out = render(mix, 3000)
        let expected = 0.5 + 0.25 * VolumeCurve.gain(level: 0.5)
        #expect(out.allSatisfy { abs($0 - expected) < 1e-6 }, "\(out[0]) vs \(expected)")
    }

    /// Rain adds itself into the sum (`MixableSource`): bit for bit the sum
    /// of its own samples times the layer's gain, over request sizes that end
    /// inside its blocks, and its `render` and `render(adding:)` are one stream.
    @Test func aLayerAddingItselfGivesTheSumOfItsOwnSamples() {
        #expect(RainSound(sampleRate: 48_000).mixable != nil)
        #expect(PinkNoise().mixable == nil)
        let sizes = [1024, 700, 333, 1024, 2048, 5, 1500, 4096]
        let mix = MixSource(layers: [("pink", PinkNoise(seed: 3), 0.9), ("rain", RainSound(sampleRate: 48_000, seed: 4), 0.7)],
                            rampFrames: 4800)
        let pink = PinkNoise(seed: 3), rain = RainSound(sampleRate: 48_000, seed: 4)
        let gPink = VolumeCurve.gain(level: 0.9), gRain = VolumeCurve.gain(level: 0.7)
        var mixed: [Float] = [], expected: [Float] = []
        for n in sizes {
            mixed += render(mix, n)
            var done = 0
            while done < n {  // the mix's own chunks
                let c = min(1024, n - done)
                let p = render(pink, c), r = render(rain, c)
                for i in 0..<(2 * c) { expected.append(p[i] * gPink + r[i] * gRain) }
                done += c
            }
        }
        #expect(mixed == expected)

        let apart = RainSound(sampleRate: 48_000, seed: 9), together = RainSound(sampleRate: 48_000, seed: 9)
        var a: [Float] = [], t: [Float] = []
        for (k, n) in sizes.enumerated() {
            a += render(apart, n)
            if k % 2 == 0 {
                t += render(together, n)
            } else {
                var added = [Float](repeating: 0.25, count: 2 * n)
                added.withUnsafeMutableBufferPointer { together.render(adding: $0.baseAddress!, frames: n, gain: 0.5) }
                t += added.map { ($0 - 0.25) / 0.5 }
            }
        }
        #expect(a.count == t.count)
        #expect(zip(a, t).allSatisfy { abs($0 - $1) < 1e-6 }, "render and render(adding:) are not one stream")
    }

    @Test func aLevelSetBeforeTheFirstBlockIsWhereTheLayerStarts() {
        let mix = MixSource(layers: [("a", ConstantSource(1), 1)], rampFrames: 4800)
        #expect(mix.setLevel(soundID: "a", level: 0.5))
        #expect(!mix.setLevel(soundID: "nope", level: 0.5))
        let out = render(mix, 100)
        #expect(abs(out[0] - VolumeCurve.gain(level: 0.5)) < 1e-6)
    }

    @Test func aLevelChangeRampsWithoutAStep() {
        let mix = MixSource(layers: [("a", ConstantSource(0.8), 0.2), ("b", ConstantSource(-0.3), 1)], rampFrames: 4800)
        var out = render(mix, 1000)
        mix.setLevel(soundID: "a", level: 1)
        out += render(mix, 6000)
        mix.setLevel(soundID: "b", level: 0)
        out += render(mix, 6000)
        // Constant sources: every jump is the ramp; at most 1/4800 of full scale per frame per layer.
        #expect(maxJump(out) <= 0.8 / 4800 + 1e-6, "jump \(maxJump(out))")
        #expect(abs(out[out.count - 2] - 0.8) < 1e-6, "ends at a alone at full level")
    }

    @Test func aSilentLayerIsNotRendered() {
        let quiet = CountingSource(1)
        let loud = CountingSource(0.5)
        let mix = MixSource(layers: [("q", quiet, 0), ("l", loud, 1)], rampFrames: 480)
        _ = render(mix, 4096)
        #expect(quiet.renders == 0 && loud.renders > 0)
        mix.setLevel(soundID: "q", level: 1)
        _ = render(mix, 1024)
        #expect(quiet.renders == 1)
    }

    @Test func switchingBetweenMixesStaysWithinTheSourcesOwnJumps() {
        func mixA() -> MixSource {
            MixSource(layers: [("pink", PinkNoise(seed: 1), 0.8), ("rain", RainSound(sampleRate: 48_000, seed: 2), 0.6)], rampFrames: 4800)
        }
        func mixB() -> MixSource {
            MixSource(layers: [("brown", BrownNoise(sampleRate: 48_000, seed: 3), 0.9), ("surf", SurfSound(sampleRate: 48_000, seed: 4), 0.7)],
                      rampFrames: 4800)
        }
        let ownA = maxJump(render(mixA(), 96_000)), ownB = maxJump(render(mixB(), 96_000))
        let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
        r.play(mixA(), fadeFrames: 0)
        var out = r.floats(48_000).samples
        r.crossfade(to: mixB(), frames: 72_000)
        out += r.floats(96_000).samples
        r.crossfade(to: mixA(), frames: 72_000)
        out += r.floats(96_000).samples
        let bound = (ownA * ownA + ownB * ownB).squareRoot()
        #expect(maxJump(out) <= bound * 1.05, "jump \(maxJump(out)) vs sources \(ownA), \(ownB)")
        while r.takeRetired() != nil {}
    }
}
