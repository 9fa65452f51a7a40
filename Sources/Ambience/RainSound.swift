// SPDX-License-Identifier: Apache-2.0
/// A rain-like texture: a band-limited noise bed whose level drifts slowly,
/// plus sparse random droplets (short decaying pings with a noisy attack).
/// Each channel has its own bed, drift and droplets, so the field sounds wide.
/// Bed RMS ≈ 0.07, droplets up to ≈ 0.2; peaks stay under 0.6.
public final class RainSound: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: all state is touched only by `render`, on one thread at
    // a time (ownership is handed over through a queue).
    private var left: RainChannel
    private var right: RainChannel

    /// A new rain generator for `sampleRate`; `seed` makes it reproducible.
    public init(sampleRate: Int, seed: UInt64 = 0x5EED_0004) {
        left = RainChannel(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 7))
        right = RainChannel(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 8))
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        RainChannel.renderStereo(&left, &right, into: buffer, frames: frames)
    }
}

/// One decaying droplet: a sine ping (rotated phasor, no trig per sample)
/// plus a short burst of noise for the impact.
struct Droplet {
    var re: Float = 0, im: Float = 0
    var cosStep: Float = 1, sinStep: Float = 0
    var envelope: Float = 0
    var decay: Float = 0
}

/// One channel of rain. Eight droplet voices held in plain fields, so
/// rendering never allocates.
struct RainChannel: ChannelGenerator {
    var random: NoiseRandom
    let sampleRate: Float
    // Bed: one-pole high-pass (~400 Hz) into one-pole low-pass (~5 kHz).
    let hpPole: Float, lpCoefficient: Float
    var hpPreviousIn: Float = 0, hpPreviousOut: Float = 0, lpState: Float = 0
    // Slow level drift: a smoothed random target, refreshed every ~0.25 s.
    var drift: Float = 1, driftTarget: Float = 1, driftCountdown = 0
    let driftSmoothing: Float
    // Droplets.
    var d0 = Droplet(), d1 = Droplet(), d2 = Droplet(), d3 = Droplet()
    var d4 = Droplet(), d5 = Droplet(), d6 = Droplet(), d7 = Droplet()
    var nextVoice = 0
    let dropProbability: Float

    init(sampleRate: Int, random: NoiseRandom) {
        self.random = random
        let rate = Float(max(sampleRate, 8000))
        self.sampleRate = rate
        hpPole = DSPMath.exp(-2 * Float.pi * 400 / rate)
        lpCoefficient = 1 - DSPMath.exp(-2 * Float.pi * 5000 / rate)
        driftSmoothing = 1 - DSPMath.exp(-1 / (0.3 * rate))
        dropProbability = 40 / rate  // ~40 droplets per second per channel
    }

    @inline(__always)
    mutating func next() -> Float {
        let white = random.nextBipolar()
        let hp = white - hpPreviousIn + hpPole * hpPreviousOut
        hpPreviousIn = white
        hpPreviousOut = hp
        lpState += lpCoefficient * (hp - lpState)

        if driftCountdown <= 0 {
            driftTarget = 0.75 + 0.5 * random.nextUnit()
            driftCountdown = Int(sampleRate * 0.25)
        }
        driftCountdown -= 1
        drift += driftSmoothing * (driftTarget - drift)

        if random.nextUnit() < dropProbability { trigger() }
        let drops = Self.step(&d0) + Self.step(&d1) + Self.step(&d2) + Self.step(&d3)
            + Self.step(&d4) + Self.step(&d5) + Self.step(&d6) + Self.step(&d7)
        let impact = drops.magnitude * white * 0.5
        return lpState * 0.19 * drift + drops + impact
    }

    /// Starts a droplet on the next voice (round robin, replacing the oldest).
    mutating func trigger() {
        let frequency = 1200 + 4000 * random.nextUnit()
        let omega = 2 * Float.pi * frequency / sampleRate
        let decaySeconds = 0.004 + 0.016 * random.nextUnit()
        let loudness = random.nextUnit()
        var d = Droplet()
        d.cosStep = DSPMath.cos(omega)
        d.sinStep = DSPMath.sin(omega)
        d.re = 0.03 + 0.12 * loudness * loudness  // starts at zero crossing
        d.im = 0
        d.envelope = 1
        d.decay = DSPMath.exp(-1 / (decaySeconds * sampleRate))
        switch nextVoice {
        case 0: d0 = d
        case 1: d1 = d
        case 2: d2 = d
        case 3: d3 = d
        case 4: d4 = d
        case 5: d5 = d
        case 6: d6 = d
        default: d7 = d
        }
        nextVoice = (nextVoice + 1) & 7
    }

    /// Advances one droplet by a sample and returns its output.
    @inline(__always)
    static func step(_ d: inout Droplet) -> Float {
        if d.envelope < 1e-4 { return 0 }
        let re = d.re * d.cosStep - d.im * d.sinStep
        let im = d.re * d.sinStep + d.im * d.cosStep
        d.re = re
        d.im = im
        d.envelope *= d.decay
        return im * d.envelope
    }
}
