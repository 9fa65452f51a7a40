// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import Ambience

/// The long fade moves along the volume curve (equal dB per unit of time),
/// lands exactly on its target, survives a rewind bit for bit, and the mute
/// stage silences the stream without touching the volume gain.
@Suite struct LongFadeTests {
    static let rate = 48_000

    /// Per-64-frame gains of a long fade over `frames` on a constant 1.0 source.
    static func envelope(frames: Int, to target: Double = 0, from start: Double = 1) -> (gains: [Float], renderer: AmbienceRenderer) {
        let r = AmbienceRenderer(sampleRate: rate, maxFrames: 1024)
        r.play(ConstantSource(1), fadeFrames: 0)
        r.longFade(to: start, frames: 0)
        r.longFade(to: target, frames: frames)
        var gains: [Float] = []
        var left = frames
        while left > 0 {
            let n = min(1024, left)
            let out = r.floats(n).samples
            for i in stride(from: 0, to: n, by: 64) { gains.append(out[2 * i]) }
            left -= n
        }
        return (gains, r)
    }

    @Test func aFadeOutIsEvenInDecibelsAndEndsInExactSilenceOnTime() {
        let frames = 10 * Self.rate  // 10 s
        let (gains, r) = Self.envelope(frames: frames)
        #expect(!r.isLongFading)
        #expect(r.longFadeMultiplier == 0)
        #expect(r.floats(64).samples.allSatisfy { $0 == 0 })
        // Over the first 40 % (down to −20 dB, where the bend into silence
        // changes the rate by 3 %) every 64 frames lose the same dB.
        let perStep = 50.0 / Double(frames / 64)
        let audible = gains.prefix(Int(Double(gains.count) * 0.4))
        var worst = 0.0
        for (a, b) in zip(audible, audible.dropFirst()) {
            let db = 20 * DSPMath.log10(Double(a) / Double(b))
            worst = max(worst, abs(db - perStep))
        }
        #expect(worst < perStep * 0.05, "dB per step deviates by \(worst) from \(perStep)")
        // Monotonic all the way down.
        #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 >= $1 })
    }

    @Test func aFadeInRisesAlongTheCurveToUnity() {
        let (gains, r) = Self.envelope(frames: 48_000, to: 1, from: 0)
        #expect(gains[0] < 1e-5, "starts from silence")
        #expect(zip(gains, gains.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(r.longFadeMultiplier == 1)
        // Half way the multiplier is −25 dB (the curve's middle), not −6 dB.
        let middle = Double(gains[gains.count / 2])
        #expect(abs(20 * DSPMath.log10(middle) + 25) < 0.5)
    }

    @Test func aFadeReversedMidwayContinuesFromWhereItIs() {
        let r = AmbienceRenderer(sampleRate: Self.rate, maxFrames: 1024)
        r.play(ConstantSource(1), fadeFrames: 0)
        r.longFade(to: 0, frames: 48_000)
        let before = r.floats(24_000).samples
        r.longFade(to: 1, frames: 4800)
        let after = r.floats(4800).samples
        #expect(abs(after[0] - before[before.count - 1]) < 0.01, "no jump when reversed")
        #expect(r.longFadeMultiplier == 1)
    }

    @Test func aLongFadeLandsOnItsTargetWithoutDrift() {
        var fade = LongFade()
        fade.start(to: 0.01, frames: 900 * Self.rate)  // 15 minutes
        var frames = 0
        while fade.remaining > 0 { fade.step(); frames += 1 }
        #expect(frames == 900 * Self.rate)
        #expect(abs(fade.gain - 0.01) < 1e-6)
    }

    @Test func aRewindDuringALongFadeRestoresItsPosition() {
        let (reference, again, took) = RewindTests.compare(before: 30_000, rewound: 3000, after: 20_000,
            setup: { $0.play(CounterSource(), fadeFrames: 0); $0.longFade(to: 0, frames: 96_000) },
            request: { $0.setGain(0.5, rampFrames: 2880) })
        #expect(took == 3000)
        #expect(again == reference)
        let (reference2, again2, _) = RewindTests.compare(before: 30_000, rewound: 2500, after: 20_000,
            setup: { $0.play(CounterSource(), fadeFrames: 0); $0.longFade(to: 0, frames: 96_000) },
            request: { $0.longFade(to: 1, frames: 9600) })
        #expect(again2 == reference2)
    }

    @Test func muteSilencesWithAShortRampAndKeepsTheVolume() {
        let r = AmbienceRenderer(sampleRate: Self.rate, maxFrames: 1024)
        r.play(ConstantSource(1), fadeFrames: 0)
        r.setGain(0.5, rampFrames: 0)
        r.setMuted(true, rampFrames: 480)
        let ramp = r.floats(480).samples
        #expect(ramp[0] > 0.49 && ramp[0] <= 0.5)
        #expect(zip(ramp, ramp.dropFirst()).allSatisfy { $0 >= $1 })
        #expect(r.floats(1000).samples.allSatisfy { $0 == 0 })
        #expect(r.currentGain == 0.5)
        #expect(r.isPlaying, "the stream keeps running")
        r.setMuted(false, rampFrames: 480)
        _ = r.floats(480)
        #expect(r.floats(10).samples.allSatisfy { $0 == 0.5 })
    }
}

/// The fade measured on rendered audio: its length, the largest level step
/// between consecutive 1024-frame periods, and the click metric (no sample
/// jump beyond the material's own), on a noise and a loop with transients.
@Suite struct RenderedFadeTests {
    @Test(arguments: ["pink", "rain"]) func anEightSecondFadeIsEvenAndClickFree(id: String) throws {
        let sound = try #require(BuiltInSounds.sound(id: id))
        let m = FadeMeasurement.measure(makeSource: { sound.makeSource(sampleRate: 48_000, seed: 3) }, seconds: 8)
        #expect(m.endsInSilence)
        #expect(abs(m.lengthSeconds - 8) <= 1024.0 / 48_000, "length \(m.lengthSeconds) s")
        // 50 dB over 8 s is 0.13 dB per 21 ms period, twice that where the
        // multiplier bends into silence; nothing near an audible step (~1 dB).
        #expect(m.largestStepDB < 0.35, "largest step \(m.largestStepDB) dB")
        #expect(m.clickRatio <= 1.0001, "click ratio \(m.clickRatio)")
    }
}
