// SPDX-License-Identifier: Apache-2.0
/// A surf-like texture: waves that swell and recede every 6–13 s. Noise is
/// shaped by a slow, irregular envelope (each wave has its own length, height
/// and rise time) and by a low-pass that opens as a wave builds and closes as
/// it draws back, so crests are louder and brighter than troughs. Each channel
/// has its own noise and the right hears each wave a little later, so the
/// field is wide; a high-pass keeps DC out. RMS ≈ 0.09, peaks ≈ 0.45 (under 0.6).
public final class SurfSound: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: all state is touched only by `render`, on one thread at
    // a time (ownership is handed over through a queue).
    private var waves: SurfWaves
    private var left: SurfChannel
    private var right: SurfChannel

    /// A new surf generator for `sampleRate`; `seed` makes it reproducible.
    public init(sampleRate: Int, seed: UInt64 = 0x5EED_0005) {
        waves = SurfWaves(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 11))
        left = SurfChannel(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 9))
        right = SurfChannel(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 10))
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        // State in locals for the loop: stores through `buffer` might alias
        // `self`, so fields would be reloaded and stored back every sample.
        var w = waves, l = left, r = right
        for i in 0..<frames {
            let shape = w.next()
            buffer[2 * i] = l.next(shape: shape.x)
            buffer[2 * i + 1] = r.next(shape: shape.y)
        }
        waves = w
        left = l
        right = r
    }
}

/// The wave envelope shared by both channels: a phase running through one
/// wave at a time; each new wave draws its length, rise, height and the
/// right channel's lag. The shape rises and falls with smoothsteps, so it is
/// continuous with a continuous slope, and is 0 at both ends of every wave.
struct SurfWaves {
    var random: NoiseRandom
    let sampleRate: Float
    var phase: Float = 0
    var phaseStep: Float = 0
    var rise: Float = 0.4
    var height: Float = 1
    var lag: Float = 0

    init(sampleRate: Int, random: NoiseRandom) {
        self.random = random
        self.sampleRate = Float(max(sampleRate, 8000))
        startWave()
        phase = 0.3 * self.random.nextUnit()  // start somewhere in the first wave
    }

    /// Draws the next wave: 6–13 s long, rising over 30–50 % of it, 60–100 %
    /// high, reaching the right channel 1–4 % of a wave later.
    mutating func startWave() {
        phaseStep = 1 / ((6 + 7 * random.nextUnit()) * sampleRate)
        rise = 0.3 + 0.2 * random.nextUnit()
        height = 0.6 + 0.4 * random.nextUnit()
        lag = 0.01 + 0.03 * random.nextUnit()
    }

    /// The next (left, right) envelope shapes in [0, 1].
    @inline(__always)
    mutating func next() -> SIMD2<Float> {
        phase += phaseStep
        if phase >= 1 {
            phase = 0
            startWave()
        }
        let lagged = phase < lag ? 0 : (phase - lag) / (1 - lag)
        return SIMD2(Self.shape(phase, rise: rise), Self.shape(lagged, rise: rise)) * height
    }

    /// Rises from 0 to 1 over [0, rise], falls back to 0 over [rise, 1].
    @inline(__always)
    static func shape(_ p: Float, rise: Float) -> Float {
        let x = p < rise ? p / rise : 1 - (p - rise) / (1 - rise)
        return x * x * (3 - 2 * x)
    }
}

/// One channel of surf: unit-variance noise through a one-pole low-pass whose
/// cutoff follows the wave (250 Hz in the trough, 3 kHz at the crest, with the
/// level loss of the narrower filter compensated), a fixed 6 kHz one-pole to
/// soften the hiss, a 20 Hz high-pass against DC, then the envelope.
struct SurfChannel {
    var random: NoiseRandom
    let lowCoefficient: Float, highCoefficient: Float, hissCoefficient: Float, dcPole: Float
    var low: Float = 0, hiss: Float = 0, dcPreviousIn: Float = 0, dcPreviousOut: Float = 0
    /// Envelope floor (the sea never goes quiet) and output gain for RMS ≈ 0.09.
    let floor: Float = 0.4, gain: Float = 0.15

    init(sampleRate: Int, random: NoiseRandom) {
        self.random = random
        let rate = Float(max(sampleRate, 8000))
        lowCoefficient = 1 - DSPMath.exp(-2 * Float.pi * 250 / rate)
        highCoefficient = 1 - DSPMath.exp(-2 * Float.pi * 3000 / rate)
        hissCoefficient = 1 - DSPMath.exp(-2 * Float.pi * 6000 / rate)
        dcPole = DSPMath.exp(-2 * Float.pi * 20 / rate)
    }

    /// The next sample for envelope shape `shape` in [0, 1].
    @inline(__always)
    mutating func next(shape: Float) -> Float {
        let a = lowCoefficient + (highCoefficient - lowCoefficient) * shape
        // A one-pole low-pass of uniform noise (variance 1/3) has variance
        // a / (3 (2 − a)): scale back to unit variance.
        low += a * (random.nextBipolar() - low)
        let unit = low * ((3 * (2 - a)) / a).squareRoot()
        hiss += hissCoefficient * (unit - hiss)
        let out = hiss - dcPreviousIn + dcPole * dcPreviousOut
        dcPreviousIn = hiss
        dcPreviousOut = out
        return out * (floor + (1 - floor) * shape) * gain
    }
}
