// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience
#if canImport(Glibc)
import Glibc
#endif

/// The vectorizable S16 conversion and the renderer's steady-state fast path
/// give exactly the samples of the plain formulas and the general path.
@Suite struct ConversionTests {
    /// The plain formula the kernel replaces.
    static func reference(_ x: Float) -> Int16 {
        let v = x * 32767
        if v.isNaN { return 0 }
        let c = min(max(v, -32767), 32767)
        return Int16(c + (c >= 0 ? 0.5 : -0.5))
    }

    @Test func toInt16MatchesThePlainFormula() {
        var values: [Float] = [0, -0.0, 1, -1, 2, -2, .infinity, -.infinity, .nan, 0.5, -0.5,
                               .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .greatestFiniteMagnitude,
                               0.49999997 / 32767, 16383.5 / 32767, -16383.5 / 32767, 32766.5 / 32767]
        // Every tie k + 0.5 and its neighbours, and a sweep of random values.
        for k in stride(from: -32768, through: 32768, by: 7) {
            let tie = (Float(k) + 0.5) / 32767
            values += [tie, tie.nextUp, tie.nextDown]
        }
        var random = NoiseRandom(seed: 42)
        for _ in 0..<100_000 { values.append(random.nextBipolar() * 1.2) }
        for x in values {
            #expect(SampleConversion.toInt16(x) == Self.reference(x), "x = \(x) (bits \(x.bitPattern))")
            if SampleConversion.toInt16(x) != Self.reference(x) { break }
        }
        var out = [Int16](repeating: 7, count: values.count)
        values.withUnsafeBufferPointer { v in
            out.withUnsafeMutableBufferPointer { SampleConversion.convert(v.baseAddress!, gain: 0.75, into: $0.baseAddress!, count: v.count) }
        }
        #expect(out == values.map { Self.reference($0 * 0.75) })
    }

    @Test func int16RenderEqualsConvertedFloatRenderOnEveryPath() {
        // Two identical renderers driven alike: one renders S16 (steady-state fast
        // path where it applies), the other floats (always the general path).
        let s16 = AmbienceRenderer(sampleRate: 48_000, maxFrames: 512)
        let f32 = AmbienceRenderer(sampleRate: 48_000, maxFrames: 512)
        var mismatches = 0
        func step(_ frames: Int, _ action: (AmbienceRenderer) -> Void) {
            action(s16)
            action(f32)
            var a = [Int16](repeating: 0, count: 2 * frames)
            a.withUnsafeMutableBufferPointer { _ = s16.render(into: $0.baseAddress!, frames: frames) }
            let b = f32.floats(frames).samples.map(Self.reference)
            mismatches += zip(a, b).filter { $0 != $1 }.count
        }
        step(3000) { $0.play(PinkNoise(seed: 1), fadeFrames: 2000) }      // fade in, then steady
        step(5000) { $0.setGain(0.3, rampFrames: 1000) }                  // ramp, then steady at 0.3
        step(7000) { $0.crossfade(to: RainSound(sampleRate: 48_000, seed: 2), frames: 4000) }
        step(4000) { $0.setGain(1, rampFrames: 0) }                       // steady at unity
        step(3000) { $0.pause(fadeFrames: 2000) }                         // fade out, then silence
        step(1000) { $0.play(nil, fadeFrames: 0) }                        // resume, steady
        #expect(mismatches == 0)
        while s16.takeRetired() != nil {}
        while f32.takeRetired() != nil {}
    }
}
