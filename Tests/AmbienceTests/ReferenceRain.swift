// SPDX-License-Identifier: Apache-2.0
import Ambience

/// The rain generator as it was before its block-wise form (every sample
/// drawn with PCG32, per-sample droplet voices to −80 dB), kept as the
/// reference the current `RainSound` is checked against (`RainReferenceTests`).
///
/// A rain-like texture: a band-limited noise bed whose level drifts slowly,
/// plus sparse random droplets (short decaying pings with a noisy attack).
/// Each channel has its own bed, drift and droplets, so the field sounds wide.
/// Bed RMS ≈ 0.07, droplets up to ≈ 0.2; peaks stay under 0.6.
///
/// Rendered a block at a time per channel: one pass draws the noise, runs the
/// bed and decides the droplets (the random sequence of one sample at a time),
/// then each droplet voice is stepped over the block on its own, stopping
/// where it has decayed, and a last pass adds the droplets and their impact.
/// The samples are exactly those of stepping every voice every sample (the
/// voices are summed in the same order), at about half the instructions.
final class ReferenceRain: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: all state is touched only by `render`, on one thread at
    // a time (ownership is handed over through a queue).
    private var left: ReferenceRainChannel
    private var right: ReferenceRainChannel
    private let scratch: ReferenceRainScratch

    /// A new rain generator for `sampleRate`; `seed` makes it reproducible.
    init(sampleRate: Int, seed: UInt64 = 0x5EED_0004) {
        left = ReferenceRainChannel(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 7))
        right = ReferenceRainChannel(sampleRate: sampleRate, random: NoiseRandom(seed: seed, stream: 8))
        scratch = ReferenceRainScratch()
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        var done = 0
        while done < frames {
            let n = min(ReferenceRainScratch.blockFrames, frames - done)
            left.render(into: buffer + 2 * done, stride: 2, frames: n, scratch)
            right.render(into: buffer + 2 * done + 1, stride: 2, frames: n, scratch)
            done += n
        }
    }
}

/// The block buffers of one `RainSound`, allocated once (never on the audio thread).
final class ReferenceRainScratch: @unchecked Sendable {
    // @unchecked Sendable: used only inside `render`, one thread at a time.
    static let blockFrames = 512
    /// The white noise of each sample (the impact reuses it).
    let white = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    /// The bed of each sample, then the finished output.
    let bed = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    /// The droplets' sum at each sample.
    let drops = UnsafeMutablePointer<Float>.allocate(capacity: blockFrames)
    /// Droplets started in the block: sample index and voice, in order.
    let triggerAt = UnsafeMutablePointer<Int>.allocate(capacity: blockFrames)
    let triggered = UnsafeMutablePointer<ReferenceDroplet>.allocate(capacity: blockFrames)
    let triggerVoice = UnsafeMutablePointer<Int>.allocate(capacity: blockFrames)

    deinit {
        white.deallocate(); bed.deallocate(); drops.deallocate()
        triggerAt.deallocate(); triggered.deallocate(); triggerVoice.deallocate()
    }
}

/// One decaying droplet: a sine ping (rotated phasor, no trig per sample)
/// plus a short burst of noise for the impact.
struct ReferenceDroplet {
    var re: Float = 0, im: Float = 0
    var cosStep: Float = 1, sinStep: Float = 0
    var envelope: Float = 0
    var decay: Float = 0
}

/// One channel of rain. Eight droplet voices held in plain fields, so
/// rendering never allocates.
struct ReferenceRainChannel {
    var random: NoiseRandom
    let sampleRate: Float
    // Bed: one-pole high-pass (~400 Hz) into one-pole low-pass (~5 kHz).
    let hpPole: Float, lpCoefficient: Float
    var hpPreviousIn: Float = 0, hpPreviousOut: Float = 0, lpState: Float = 0
    // Slow level drift: a smoothed random target, refreshed every ~0.25 s.
    var drift: Float = 1, driftTarget: Float = 1, driftCountdown = 0
    let driftSmoothing: Float
    // Droplets.
    var d0 = ReferenceDroplet(), d1 = ReferenceDroplet(), d2 = ReferenceDroplet(), d3 = ReferenceDroplet()
    var d4 = ReferenceDroplet(), d5 = ReferenceDroplet(), d6 = ReferenceDroplet(), d7 = ReferenceDroplet()
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

    /// Renders `n` ≤ `ReferenceRainScratch.blockFrames` samples of this channel to
    /// `out[0], out[stride], …`.
    mutating func render(into out: UnsafeMutablePointer<Float>, stride: Int, frames n: Int, _ s: ReferenceRainScratch) {
        // Pass 1: noise, bed and drift, and which droplets start where (the
        // draws in the order of one sample at a time).
        var ch = self
        var triggers = 0
        for i in 0..<n {
            let white = ch.random.nextBipolar()
            let hp = white - ch.hpPreviousIn + ch.hpPole * ch.hpPreviousOut
            ch.hpPreviousIn = white
            ch.hpPreviousOut = hp
            ch.lpState += ch.lpCoefficient * (hp - ch.lpState)
            if ch.driftCountdown <= 0 {
                ch.driftTarget = 0.75 + 0.5 * ch.random.nextUnit()
                ch.driftCountdown = Int(ch.sampleRate * 0.25)
            }
            ch.driftCountdown -= 1
            ch.drift += ch.driftSmoothing * (ch.driftTarget - ch.drift)
            if ch.random.nextUnit() < ch.dropProbability {
                s.triggerAt[triggers] = i
                s.triggerVoice[triggers] = ch.nextVoice
                s.triggered[triggers] = ch.makeDroplet()
                ch.nextVoice = (ch.nextVoice + 1) & 7
                triggers += 1
            }
            s.white[i] = white
            s.bed[i] = ch.lpState * 0.19 * ch.drift
        }
        // Pass 2: each voice over the block, in voice order (the order the
        // per-sample sum used), restarted where a droplet replaced it.
        s.drops.update(repeating: 0, count: n)
        ch.d0 = Self.run(ch.d0, voice: 0, n, s, triggers)
        ch.d1 = Self.run(ch.d1, voice: 1, n, s, triggers)
        ch.d2 = Self.run(ch.d2, voice: 2, n, s, triggers)
        ch.d3 = Self.run(ch.d3, voice: 3, n, s, triggers)
        ch.d4 = Self.run(ch.d4, voice: 4, n, s, triggers)
        ch.d5 = Self.run(ch.d5, voice: 5, n, s, triggers)
        ch.d6 = Self.run(ch.d6, voice: 6, n, s, triggers)
        ch.d7 = Self.run(ch.d7, voice: 7, n, s, triggers)
        // Pass 3: bed + drops + impact, as one sample at a time added them.
        for i in 0..<n {
            let drops = s.drops[i]
            out[i * stride] = s.bed[i] + drops + drops.magnitude * s.white[i] * 0.5
        }
        self = ch
    }

    /// Steps voice `voice` (state `d` at the block's start) over the block,
    /// adding it into `s.drops`; returns its state at the block's end.
    private static func run(_ start: ReferenceDroplet, voice: Int, _ n: Int, _ s: ReferenceRainScratch, _ triggers: Int) -> ReferenceDroplet {
        var d = start
        var from = 0
        for t in 0..<triggers where s.triggerVoice[t] == voice {
            let at = s.triggerAt[t]
            step(&d, from: from, to: at, s.drops)
            d = s.triggered[t]
            from = at
        }
        step(&d, from: from, to: n, s.drops)
        return d
    }

    /// Advances `d` over samples `from..<to`, adding its output; stops where it has decayed.
    @inline(__always)
    private static func step(_ d: inout ReferenceDroplet, from: Int, to: Int, _ drops: UnsafeMutablePointer<Float>) {
        var re = d.re, im = d.im, envelope = d.envelope
        let c = d.cosStep, sn = d.sinStep, decay = d.decay
        var i = from
        while i < to && envelope >= 1e-4 {
            let nre = re * c - im * sn
            let nim = re * sn + im * c
            re = nre
            im = nim
            envelope *= decay
            drops[i] += im * envelope
            i += 1
        }
        d.re = re
        d.im = im
        d.envelope = envelope
    }

    /// A new droplet with random pitch, decay and loudness.
    mutating func makeDroplet() -> ReferenceDroplet {
        let frequency = 1200 + 4000 * random.nextUnit()
        let omega = 2 * Float.pi * frequency / sampleRate
        let decaySeconds = 0.004 + 0.016 * random.nextUnit()
        let loudness = random.nextUnit()
        var d = ReferenceDroplet()
        d.cosStep = DSPMath.cos(omega)
        d.sinStep = DSPMath.sin(omega)
        d.re = 0.03 + 0.12 * loudness * loudness  // starts at zero crossing
        d.im = 0
        d.envelope = 1
        d.decay = DSPMath.exp(-1 / (decaySeconds * sampleRate))
        return d
    }
}
