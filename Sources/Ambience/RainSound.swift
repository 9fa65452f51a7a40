// SPDX-License-Identifier: Apache-2.0
/// A rain-like texture: a band-limited noise bed whose level drifts slowly,
/// plus sparse random droplets (short decaying pings with a noisy attack).
/// Each channel has its own bed, drift and droplets, so the field sounds wide.
/// Bed RMS ≈ 0.07, droplets up to ≈ 0.2; peaks stay under 0.6.
///
/// Rendered in blocks of 512 frames, each part in the cheapest form
/// that gives the same sound:
/// - the bed's white noise comes four lanes at a time from xorshift
///   generators (L, R, L, R), two 16-bit values a lane per step, and both
///   channels' filters run as one `SIMD2` second-order recursion;
/// - the drift is a one-pole glide toward a random target, applied as a
///   linear gain ramp across each block (its time constant is 0.3 s);
/// - droplets start as a Poisson process (exponential waits, ~40 a second
///   per channel, on a 4-sample grid) and each is a damped sine stepped four
///   samples at a time by the recurrence its samples obey four apart; it
///   ends at one level for all (`RainDrops.endLevel`: the loudest 30 dB
///   down, then ~10 dB under the bed's noise in its critical band even at
///   the bed's quietest drift, ~6 dB under the masked threshold);
/// - the impact adds the droplet times the bed's white noise (as the
///   rectified droplet did before: the noise is symmetric, so the product
///   has the same distribution);
/// - in a mix, the layer adds itself times its level in the bed's pass
///   (`MixableSource`), bit for bit what the mix's own pass gave.
/// Integer and IEEE arithmetic in Swift only (`DSPMath` for the droplets'
/// and filters' coefficients, no FMA), so every platform renders the same
/// samples.
public final class RainSound: MixableSource, @unchecked Sendable {
    // @unchecked Sendable: all state is touched only by `render`, on one thread at
    // a time (ownership is handed over through a queue). For the same reason
    // the parts' accesses go unchecked (`@exclusivity(unchecked)`: no runtime
    // access tracking on the audio thread).
    @exclusivity(unchecked) private var bed: RainBed
    @exclusivity(unchecked) private var left: RainDrops
    @exclusivity(unchecked) private var right: RainDrops
    private let buffers: RainBuffers
    /// Frames of the last block not yet copied out (the end of `buffers.rest`).
    private var restFrames = 0

    /// A new rain generator for `sampleRate`; `seed` makes it reproducible.
    public init(sampleRate: Int, seed: UInt64 = 0x5EED_0004) {
        let rate = Float(max(sampleRate, 8000))
        var seeds = NoiseRandom(seed: seed, stream: 9)
        bed = RainBed(rate: rate, seeds: &seeds)
        left = RainDrops(rate: rate, random: NoiseRandom(seed: seed, stream: 7))
        right = RainDrops(rate: rate, random: NoiseRandom(seed: seed, stream: 8))
        buffers = RainBuffers()
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    ///
    /// Blocks always start every `blockFrames` frames of the stream, whatever
    /// the requests, so the samples do not depend on how they are asked for:
    /// whole blocks go straight to `buffer`, a block a request ends inside is
    /// rendered to `buffers.rest` and the next request starts with its rest.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        render(buffer, frames: frames, adding: nil)
    }

    /// See `MixableSource.render(adding:frames:gain:)`: the same samples as
    /// `render`, each added to `buffer` times `gain` in the bed's pass.
    public func render(adding buffer: UnsafeMutablePointer<Float>, frames: Int, gain: Float) {
        render(buffer, frames: frames, adding: gain)
    }

    /// `adding` nil: writes the samples; otherwise adds them times `adding`.
    private func render(_ buffer: UnsafeMutablePointer<Float>, frames: Int, adding: Float?) {
        let block = RainBuffers.blockFrames
        var done = 0
        if restFrames > 0 {
            let n = min(restFrames, frames)
            Self.put(buffers.rest + 2 * (block - restFrames), into: buffer, count: 2 * n, adding: adding)
            restFrames -= n
            done = n
        }
        while frames - done >= block {
            renderBlock(into: buffer + 2 * done, adding: adding)
            done += block
        }
        if done < frames {
            renderBlock(into: buffers.rest, adding: nil)
            let n = frames - done
            Self.put(buffers.rest, into: buffer + 2 * done, count: 2 * n, adding: adding)
            restFrames = block - n
        }
    }

    /// Copies `count` samples, or adds them times `gain`.
    private static func put(_ from: UnsafePointer<Float>, into to: UnsafeMutablePointer<Float>, count: Int, adding gain: Float?) {
        guard let gain else {
            to.update(from: from, count: count)
            return
        }
        for i in 0..<count { to[i] += from[i] * gain }
    }

    /// One block of `blockFrames` frames.
    private func renderBlock(into out: UnsafeMutablePointer<Float>, adding: Float?) {
        let b = buffers, n = RainBuffers.blockFrames
        bed.noise.fill(b.white, count: 2 * n)
        left.render(groups: n / 4, into: b.drops, b)
        right.render(groups: n / 4, into: b.drops + 16, b)
        if let gain = adding {
            bed.render(into: out, frames: n, b, adding: true, gain: gain)
        } else {
            bed.render(into: out, frames: n, b, adding: false, gain: 1)
        }
    }
}

/// The block buffers of one `RainSound`, allocated once (never on the audio thread).
final class RainBuffers: @unchecked Sendable {
    // @unchecked Sendable: used only inside `render`, one thread at a time.
    static let blockFrames = 512
    /// The bed's white noise, interleaved L, R, 16-byte aligned (as are the droplets).
    let white = UnsafeMutableRawPointer.allocate(byteCount: 8 * blockFrames, alignment: 16)
    /// Both channels' droplets, 16-byte aligned for whole-group loads and stores:
    /// Group g (four frames) at byte 32·g: four left samples, then four right.
    /// All zeros between blocks: the bed's pass clears what it has read.
    let drops = UnsafeMutableRawPointer.allocate(byteCount: 8 * blockFrames, alignment: 16)
    /// Droplets starting in the block: group and voice, in order.
    let startGroup = UnsafeMutablePointer<Int>.allocate(capacity: RainDrops.maxStartsPerBlock)
    let startVoice = UnsafeMutablePointer<Int>.allocate(capacity: RainDrops.maxStartsPerBlock)
    let started = UnsafeMutablePointer<DropVoice>.allocate(capacity: RainDrops.maxStartsPerBlock)
    /// The block a request ended inside.
    let rest = UnsafeMutablePointer<Float>.allocate(capacity: 2 * blockFrames)

    init() {
        rest.initialize(repeating: 0, count: 2 * Self.blockFrames)
        drops.initializeMemory(as: Float.self, repeating: 0, count: 2 * Self.blockFrames)
    }

    deinit {
        white.deallocate(); drops.deallocate()
        startGroup.deallocate(); startVoice.deallocate(); started.deallocate(); rest.deallocate()
    }
}

/// Four xorshift32 generators side by side (lanes L, R, L, R): uniform
/// values in [-0.5, 0.5), two frames per step, in vector registers.
struct LaneNoise {
    var state: SIMD4<UInt32>

    init(seeds: inout NoiseRandom) {
        state = SIMD4(seeds.nextUInt32() | 1, seeds.nextUInt32() | 1, seeds.nextUInt32() | 1, seeds.nextUInt32() | 1)
    }

    /// Writes `count` (a multiple of 8) values to `raw` (16-byte aligned):
    /// each step of the lanes gives two values a lane, its high and its low
    /// 16 bits (four frames from one step; 16 bits are more than the bed's
    /// filtered noise keeps at its level, ~−23 dBFS). A pass of its own: drawn inside the bed's pass, the lanes' shifts
    /// compile to scalar code (measured: a third more instructions in all).
    @inline(__always)
    mutating func fill(_ raw: UnsafeMutableRawPointer, count: Int) {
        var s = state
        var p = raw
        let high = SIMD4<UInt32>(repeating: 0xFFFF_0000)
        for _ in 0..<(count / 8) {
            s ^= s &<< 13
            s ^= s &>> 17
            s ^= s &<< 5
            p.storeBytes(of: SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: s & high)) * (1.0 / 4_294_967_296.0), as: SIMD4<Float>.self)
            p.storeBytes(of: SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: s &<< 16)) * (1.0 / 4_294_967_296.0), toByteOffset: 16,
                         as: SIMD4<Float>.self)
            p += 32
        }
        state = s
    }
}

/// Both channels' bed (lane x left, lane y right): white noise through a
/// one-pole high-pass (~400 Hz) and a one-pole low-pass (~5 kHz), run as
/// the one second-order recursion they make together, times a slowly
/// drifting level; the droplets and their impact are added in the same pass.
struct RainBed {
    var noise: LaneNoise
    var random: NoiseRandom
    /// The cascade: u = (w − w₋₁) + p1·u₋₁ + p2·u₋₂, output c·u, where
    /// p1 = a + k, p2 = −a·k for the high-pass pole a and the low-pass
    /// pole k = 1 − c.
    let p1: Float, p2: Float, lpCoefficient: Float
    var previousWhite = SIMD2<Float>(), u1 = SIMD2<Float>(), u2 = SIMD2<Float>()
    // The drift: glides toward a random target in [0.75, 1.25], a new one every 0.25 s.
    var drift = SIMD2<Float>(repeating: 1), driftTarget = SIMD2<Float>(repeating: 1)
    var driftCountdown = 0
    let driftPeriod: Int
    /// What the drift keeps of its distance to the target per sample, and per whole block.
    let driftKeep: Float, driftKeepBlock: Float
    /// The bed's level for white noise in [-0.5, 0.5).
    static let level: Float = 0.38

    init(rate: Float, seeds: inout NoiseRandom) {
        noise = LaneNoise(seeds: &seeds)
        random = seeds
        let a = DSPMath.exp(-2 * Float.pi * 400 / rate)
        let k = DSPMath.exp(-2 * Float.pi * 5000 / rate)
        p1 = a + k
        p2 = -(a * k)
        lpCoefficient = 1 - k
        driftKeep = DSPMath.exp(-1 / (0.3 * rate))
        driftKeepBlock = Self.power(driftKeep, RainBuffers.blockFrames)
        driftPeriod = Int(rate * 0.25)
    }

    /// `base`ⁿ by squaring (exact IEEE steps, the same on every platform).
    static func power(_ base: Float, _ n: Int) -> Float {
        var result: Float = 1, b = base, e = n
        while e > 0 {
            if e & 1 == 1 { result *= b }
            b *= b
            e >>= 1
        }
        return result
    }

    /// Writes `n` (a multiple of 4) stereo frames: bed + droplets + droplets × white,
    /// or (`adding`) adds them times `gain` to what `out` holds.
    @inline(__always)
    mutating func render(into out: UnsafeMutablePointer<Float>, frames n: Int, _ b: RainBuffers, adding: Bool, gain mixGain: Float) {
        if driftCountdown <= 0 {
            driftTarget = SIMD2(0.75 + 0.5 * random.nextUnit(), 0.75 + 0.5 * random.nextUnit())
            driftCountdown = driftPeriod
        }
        driftCountdown -= n
        let keep = n == RainBuffers.blockFrames ? driftKeepBlock : Self.power(driftKeep, n)  // always a whole block
        let start = drift
        drift = driftTarget + (drift - driftTarget) * keep
        let scale = Self.level * lpCoefficient
        let gain = start * scale
        let gainStep = (drift - start) * (scale / Float(n))
        // Four frames a step: the recursion frame by frame in `SIMD2`, the
        // rest in `SIMD4` (L, R, L, R). `n` is a multiple of 4.
        var gain01 = SIMD4(lowHalf: gain + gainStep, highHalf: gain + 2 * gainStep)
        var gain23 = SIMD4(lowHalf: gain + 3 * gainStep, highHalf: gain + 4 * gainStep)
        let gainStep4 = SIMD4(lowHalf: 4 * gainStep, highHalf: 4 * gainStep)
        var w1 = previousWhite, y1 = u1, y2 = u2
        let q1 = p1, q2 = p2
        let p = UnsafeMutableRawPointer(out), white = UnsafeRawPointer(b.white), drops = b.drops
        let mix = SIMD4<Float>(repeating: mixGain)
        var o = 0  // byte offset of the step's four frames
        for _ in 0..<(n / 4) {
            let w01 = white.load(fromByteOffset: o, as: SIMD4<Float>.self)
            let w23 = white.load(fromByteOffset: o &+ 16, as: SIMD4<Float>.self)
            let f0 = (w01.lowHalf - w1) + q1 * y1 + q2 * y2
            let f1 = (w01.highHalf - w01.lowHalf) + q1 * f0 + q2 * y1
            let f2 = (w23.lowHalf - w01.highHalf) + q1 * f1 + q2 * f0
            let f3 = (w23.highHalf - w23.lowHalf) + q1 * f2 + q2 * f1
            y2 = f2
            y1 = f3
            w1 = w23.highHalf
            let left = drops.load(fromByteOffset: o, as: SIMD4<Float>.self)
            let right = drops.load(fromByteOffset: o &+ 16, as: SIMD4<Float>.self)
            drops.storeBytes(of: SIMD4<Float>(), toByteOffset: o, as: SIMD4<Float>.self)
            drops.storeBytes(of: SIMD4<Float>(), toByteOffset: o &+ 16, as: SIMD4<Float>.self)
            let d01 = SIMD4(left.x, right.x, left.y, right.y), d23 = SIMD4(left.z, right.z, left.w, right.w)
            let v01 = SIMD4(lowHalf: f0, highHalf: f1) * gain01 + (d01 + d01 * w01)
            let v23 = SIMD4(lowHalf: f2, highHalf: f3) * gain23 + (d23 + d23 * w23)
            if adding {
                // The mix's own sum, out + sample × gain, done here instead of in a pass of its own.
                p.storeBytes(of: p.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self) + v01 * mix, toByteOffset: o, as: SIMD4<Float>.self)
                p.storeBytes(of: p.loadUnaligned(fromByteOffset: o &+ 16, as: SIMD4<Float>.self) + v23 * mix, toByteOffset: o &+ 16,
                             as: SIMD4<Float>.self)
            } else {
                p.storeBytes(of: v01, toByteOffset: o, as: SIMD4<Float>.self)
                p.storeBytes(of: v23, toByteOffset: o &+ 16, as: SIMD4<Float>.self)
            }
            gain01 += gainStep4
            gain23 += gainStep4
            o &+= 32
        }
        previousWhite = w1
        u1 = y1
        u2 = y2
    }
}
