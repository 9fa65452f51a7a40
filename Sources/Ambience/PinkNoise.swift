// SPDX-License-Identifier: Apache-2.0
/// Pink noise (−3 dB/octave) from Paul Kellet's refined filter: white noise
/// through a sum of six one-pole low-passes, accurate to ±0.05 dB above ~10 Hz
/// at 44.1–48 kHz. Left and right use independent generators. RMS ≈ 0.1.
public final class PinkNoise: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: filter and generator state are touched only by `render`,
    // on one thread at a time (ownership is handed over through a queue).
    private var filter: PinkFilter

    /// A new generator; `seed` makes the output reproducible.
    public init(seed: UInt64 = 0x5EED_0002) {
        filter = PinkFilter(left: NoiseRandom(seed: seed, stream: 3), right: NoiseRandom(seed: seed, stream: 4))
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        // Two passes: white noise for each channel in its own loop (two scalar
        // generators in one loop get paired into slow vector code), then the
        // filter in place. State in a local: stores through `buffer` might
        // alias `self`, so fields would be reloaded and stored every sample.
        // Pointers step by 2 (no `2 * i` overflow checks in the loops).
        var f = filter
        var p = buffer
        for _ in 0..<frames { p.pointee = f.left.nextBipolar(); p += 2 }
        p = buffer + 1
        for _ in 0..<frames { p.pointee = f.right.nextBipolar(); p += 2 }
        p = buffer
        for _ in 0..<frames {
            let frame = f.filter(white: SIMD2<Float>(p[0], p[1]))
            p[0] = frame.x
            p[1] = frame.y
            p += 2
        }
        filter = f
    }
}

/// Kellet's pink filter for both channels at once: lane x is left, lane y is
/// right. Each lane does exactly the scalar filter's operations in the same
/// order, so the output is bit-identical to two scalar filters, with one SIMD
/// operation per step doing the work of both channels.
struct PinkFilter {
    var left: NoiseRandom
    var right: NoiseRandom
    var b0 = SIMD2<Float>(), b1 = SIMD2<Float>(), b2 = SIMD2<Float>(), b3 = SIMD2<Float>()
    var b4 = SIMD2<Float>(), b5 = SIMD2<Float>(), b6 = SIMD2<Float>()
    /// Brings the filter's output (RMS ≈ 1.765 for uniform input in [-1, 1))
    /// to RMS ≈ 0.1, leaving peaks near 0.5 (−6 dBFS).
    let scale: Float = 0.1 / 1.765

    init(left: NoiseRandom, right: NoiseRandom) {
        self.left = left
        self.right = right
    }

    /// The next (left, right) frame for the given white-noise frame.
    @inline(__always)
    mutating func filter(white: SIMD2<Float>) -> SIMD2<Float> {
        b0 = 0.99886 * b0 + white * 0.0555179
        b1 = 0.99332 * b1 + white * 0.0750759
        b2 = 0.96900 * b2 + white * 0.1538520
        b3 = 0.86650 * b3 + white * 0.3104856
        b4 = 0.55000 * b4 + white * 0.5329522
        b5 = -0.7616 * b5 - white * 0.0168980
        // b0 + b1 + … + b6 + white·0.5362, summed left to right like the scalar filter.
        var pink = b0 + b1
        pink = pink + b2
        pink = pink + b3
        pink = pink + b4
        pink = pink + b5
        pink = pink + b6
        pink = pink + white * 0.5362
        b6 = white * 0.115926
        return pink * scale
    }
}
