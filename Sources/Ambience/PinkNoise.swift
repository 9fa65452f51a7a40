/// Pink noise (−3 dB/octave) from Paul Kellet's refined filter: white noise
/// through a sum of six one-pole low-passes, accurate to ±0.05 dB above ~10 Hz
/// at 44.1–48 kHz. Left and right use independent generators. RMS ≈ 0.1.
public final class PinkNoise: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: filter and generator state are touched only by `render`,
    // on one thread at a time (ownership is handed over through a queue).
    private var left: PinkFilter
    private var right: PinkFilter

    /// A new generator; `seed` makes the output reproducible.
    public init(seed: UInt64 = 0x5EED_0002) {
        left = PinkFilter(random: NoiseRandom(seed: seed, stream: 3))
        right = PinkFilter(random: NoiseRandom(seed: seed, stream: 4))
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        for i in 0..<frames {
            buffer[2 * i] = left.next()
            buffer[2 * i + 1] = right.next()
        }
    }
}

/// One channel of Kellet's pink filter.
struct PinkFilter {
    var random: NoiseRandom
    var b0: Float = 0, b1: Float = 0, b2: Float = 0, b3: Float = 0
    var b4: Float = 0, b5: Float = 0, b6: Float = 0
    /// Brings the filter's output (RMS ≈ 1.765 for uniform input in [-1, 1),
    /// measured over 60 s) to RMS ≈ 0.1, leaving peaks near 0.5 (−6 dBFS).
    let scale: Float = 0.1 / 1.765

    init(random: NoiseRandom) { self.random = random }

    @inline(__always)
    mutating func next() -> Float {
        let white = random.nextBipolar()
        b0 = 0.99886 * b0 + white * 0.0555179
        b1 = 0.99332 * b1 + white * 0.0750759
        b2 = 0.96900 * b2 + white * 0.1538520
        b3 = 0.86650 * b3 + white * 0.3104856
        b4 = 0.55000 * b4 + white * 0.5329522
        b5 = -0.7616 * b5 - white * 0.0168980
        let pink = b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362
        b6 = white * 0.115926
        return pink * scale
    }
}
