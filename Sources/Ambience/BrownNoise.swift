// SPDX-License-Identifier: Apache-2.0
/// Brown (red) noise, −6 dB/octave: white noise through a leaky integrator
/// (corner ≈ 15 Hz, so it cannot wander) followed by a DC blocker (≈ 5 Hz).
/// Left and right are independent. RMS ≈ 0.1.
public final class BrownNoise: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: filter and generator state are touched only by `render`,
    // on one thread at a time (ownership is handed over through a queue).
    private var left: BrownFilter
    private var right: BrownFilter

    /// A new generator for `sampleRate`; `seed` makes the output reproducible.
    public init(sampleRate: Int, seed: UInt64 = 0x5EED_0003) {
        left = BrownFilter(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 5))
        right = BrownFilter(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 6))
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        BrownFilter.renderStereo(&left, &right, into: buffer, frames: frames)
    }
}

/// One channel of brown noise.
struct BrownFilter: ChannelGenerator {
    var random: NoiseRandom
    let leak: Float
    let inputGain: Float
    let dcPole: Float
    var integrator: Float = 0
    var dcPreviousIn: Float = 0
    var dcPreviousOut: Float = 0

    init(sampleRate: Int, random: NoiseRandom) {
        self.random = random
        let rate = Double(max(sampleRate, 1000))
        let a = DSPMath.exp(-2 * Double.pi * 15 / rate)
        leak = Float(a)
        // Stationary RMS of y = a·y + c·w with uniform w (variance 1/3) is
        // c·sqrt(1/3 / (1 − a²)); choose c for RMS 0.1.
        inputGain = Float(0.1 * ((1 - a * a) * 3).squareRoot())
        dcPole = Float(DSPMath.exp(-2 * Double.pi * 5 / rate))
    }

    @inline(__always)
    mutating func next() -> Float {
        integrator = leak * integrator + inputGain * random.nextBipolar()
        let out = integrator - dcPreviousIn + dcPole * dcPreviousOut
        dcPreviousIn = integrator
        dcPreviousOut = out
        return out
    }
}
