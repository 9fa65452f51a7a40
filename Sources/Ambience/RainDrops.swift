// SPDX-License-Identifier: Apache-2.0
// The droplets of `RainSound`: damped sines started as a Poisson process.
/// One droplet: `a` and `b` hold its last two groups of four samples, and
/// the next group is `c1·b + c2·a` (a damped sine's samples four apart obey
/// that recurrence); `groups` are left until it has decayed to `RainDrops.endLevel`.
struct DropVoice {
    var a = SIMD4<Float>(), b = SIMD4<Float>()
    var c1: Float = 0, c2: Float = 0
    var groups = 0
}

/// One channel's droplets: eight voices, reused in turn.
struct RainDrops {
    static let voiceCount = 8
    /// Where every droplet ends, whatever its start (amplitude 0.03–0.15):
    /// the loudest 30 dB down, quieter ones sooner (the quietest 16 dB
    /// down). At the bed's quietest drift that is ~10 dB under the bed's noise
    /// in the droplet's critical band, ~6 dB under its masked threshold.
    static let endLevel: Float = 0.0047
    static let maxStartsPerBlock = 16
    var random: NoiseRandom
    let rate: Float
    /// The voices (`voiceCount`), allocated once; freed by `deallocate`.
    let voices: UnsafeMutablePointer<DropVoice>
    var nextVoice = 0
    /// Samples from the block's start to the next droplet.
    var untilNext: Int
    /// Mean wait between droplets, in samples (~40 a second).
    let meanWait: Double

    init(rate: Float, random: NoiseRandom) {
        self.random = random
        self.rate = rate
        voices = .allocate(capacity: Self.voiceCount)
        voices.initialize(repeating: DropVoice(), count: Self.voiceCount)
        meanWait = Double(rate) / 40
        untilNext = 0
        untilNext = wait()
    }

    /// Frees the voices (the owner calls it from its deinit).
    func deallocate() { voices.deallocate() }

    /// e^x for the droplets' |x| ≤ 1/100: the Taylor series to x⁶ in Double
    /// (the rest under 10⁻¹⁸), rounded to Float: `DSPMath.exp`'s Float answer
    /// at a fraction of its cost. IEEE steps only.
    static func smallExp(_ x: Float) -> Float {
        let d = Double(x)
        let series = 1 + d * (1 + d * (0.5 + d * (1.0 / 6 + d * (1.0 / 24 + d * (1.0 / 120 + d / 720)))))
        return Float(series)
    }

    /// sin and cos of the droplets' ω in [0, 0.7]: the Taylor series to x¹⁷
    /// and x¹⁶ in Double (the rest under 10⁻¹⁶): the Float values of
    /// `DSPMath.sinCos` at a fraction of its cost. IEEE steps only.
    static func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
        let x2 = x * x
        var s = 1 - x2 / 272, c = 1 - x2 / 240
        s = 1 - x2 / 210 * s
        c = 1 - x2 / 182 * c
        s = 1 - x2 / 156 * s
        c = 1 - x2 / 132 * c
        s = 1 - x2 / 110 * s
        c = 1 - x2 / 90 * c
        s = 1 - x2 / 72 * s
        c = 1 - x2 / 56 * c
        s = 1 - x2 / 42 * s
        c = 1 - x2 / 30 * c
        s = 1 - x2 / 20 * s
        c = 1 - x2 / 12 * c
        s = 1 - x2 / 6 * s
        c = 1 - x2 / 2 * c
        return (x * s, c)
    }

    /// ln x for x ≥ 1 to within 0.006 (the exponent, and a parabola for
    /// the mantissa, exact at both ends): enough for a count of groups, at a
    /// fraction of `DSPMath.log`'s cost. IEEE steps only.
    static func roughLog(_ x: Float) -> Float {
        let exponent = Float(Int(x.exponent))
        let m = x.significand - 1  // [0, 1)
        let log2m = m * (1.3465553 - 0.3465553 * m)  // log₂(1 + m), exact at 0, ½ and 1
        return (exponent + log2m) * 0.6931472
    }

    /// An exponentially distributed wait (a Poisson process), in samples.
    mutating func wait() -> Int {
        let u = 1 - Double(random.nextUnit())  // (0, 1]
        return Int(-DSPMath.log(u) * meanWait)
    }

    /// Adds the droplets of `groups` 4-sample groups to `out`, one group
    /// every 32 bytes (the other channel's groups between them).
    mutating func render(groups: Int, into out: UnsafeMutableRawPointer, _ b: RainBuffers) {
        var starts = 0
        while untilNext < 4 * groups {
            if starts < Self.maxStartsPerBlock {
                b.startGroup[starts] = untilNext / 4
                b.startVoice[starts] = nextVoice
                b.started[starts] = makeDroplet()
                nextVoice = (nextVoice + 1) & (Self.voiceCount - 1)
                starts += 1
            }
            untilNext += max(1, wait())
        }
        untilNext -= 4 * groups
        for v in 0..<Self.voiceCount {
            if starts == 0 && voices[v].groups == 0 { continue }  // an idle voice: nothing to add
            var d = voices[v]
            var from = 0
            for s in 0..<starts where b.startVoice[s] == v {
                let at = b.startGroup[s]
                Self.step(&d, from: from, to: min(at, from + d.groups), out)
                d = b.started[s]
                from = at
            }
            Self.step(&d, from: from, to: min(groups, from + d.groups), out)
            voices[v] = d
        }
    }

    /// Adds `d` over groups `from..<to` (`to` no later than where it ends).
    @inline(__always)
    private static func step(_ d: inout DropVoice, from: Int, to: Int, _ out: UnsafeMutableRawPointer) {
        let count = to - from
        guard count > 0 else { return }
        var a = d.a, b = d.b
        let c1 = SIMD4<Float>(repeating: d.c1), c2 = SIMD4<Float>(repeating: d.c2)
        var p = out + 32 * from
        // Two groups a step, so that a and b trade places without copies.
        for _ in 0..<(count / 2) {
            p.storeBytes(of: p.load(as: SIMD4<Float>.self) + b, as: SIMD4<Float>.self)
            a = c1 * b + c2 * a
            (p + 32).storeBytes(of: (p + 32).load(as: SIMD4<Float>.self) + a, as: SIMD4<Float>.self)
            b = c1 * a + c2 * b
            p += 64
        }
        if count & 1 == 1 {
            p.storeBytes(of: p.load(as: SIMD4<Float>.self) + b, as: SIMD4<Float>.self)
            let next = c1 * b + c2 * a
            a = b
            b = next
        }
        d.a = a
        d.b = b
        d.groups -= count
    }

    /// A new droplet with random pitch, decay and loudness, starting at a
    /// group's first sample: y(k) = A·rᵏ·sin(ωk), k = 1 there.
    mutating func makeDroplet() -> DropVoice {
        let frequency = 1200 + 4000 * random.nextUnit()
        let omega = 2 * Float.pi * frequency / rate
        let decaySeconds = 0.004 + 0.016 * random.nextUnit()
        let loudness = random.nextUnit()
        let amplitude = 0.03 + 0.12 * loudness * loudness
        let r = Self.smallExp(-1 / (decaySeconds * rate))
        let both = Self.sinCos(Double(omega))
        let cosine = Float(both.cos), sine = Float(both.sin)
        // k = 0 is (A, 0); step back to k = −3, then forward through k = 4.
        var re = amplitude, im: Float = 0
        for _ in 0..<3 {
            let nre = (re * cosine + im * sine) / r
            im = (im * cosine - re * sine) / r
            re = nre
        }
        var samples = SIMD8<Float>()
        for k in 0..<8 {
            samples[k] = im
            let nre = r * (re * cosine - im * sine)
            im = r * (re * sine + im * cosine)
            re = nre
        }
        // q⁴ for q = r·e^{iω}: c1 = 2·Re(q⁴), c2 = −|q⁴|².
        var qr = r * cosine, qi = r * sine
        for _ in 0..<2 {
            let nqr = qr * qr - qi * qi
            qi = 2 * qr * qi
            qr = nqr
        }
        var d = DropVoice()
        d.a = samples.lowHalf
        d.b = samples.highHalf
        d.c1 = 2 * qr
        d.c2 = -(qr * qr + qi * qi)
        // A·rᵏ = endLevel at k = ln(A / endLevel) · τ · rate.
        let ln = Self.roughLog(amplitude / Self.endLevel)
        d.groups = Int(ln * decaySeconds * rate / 4) + 1
        return d
    }
}
