// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A streaming polyphase FIR resampler for a small upsampling step such as
/// 44.1 → 48 kHz: the common file-to-output case, cheaper than libsoxr at
/// medium quality (one 32-tap dot product per output frame and channel).
///
/// The rate change is `L / M` in lowest terms (160 / 147 for 44.1 → 48 kHz).
/// Output frame n lies at input position n · M / L; it is a dot product of
/// `taps` (32) input frames with one of `L` phases of a Kaiser-windowed sinc
/// cut off at half the output rate. The filter passes 0 … 0.45 · input rate
/// (19.8 kHz at 44.1 kHz) and stops from the output rate − that frequency
/// (28.2 kHz): an image that survives between those edges folds to above
/// 19.8 kHz, so it stays out of the audible band. Its stopband attenuation
/// follows from the width of that band and the 32 taps (Kaiser's formula; 94 dB
/// at 44.1 → 48 kHz), and `make` refuses a rate pair where it would fall
/// below `minimumAttenuation` or where the phase table would be large.
///
/// State (the last `taps − 1` frames) carries across calls, so a stream fed
/// in pieces is filtered as one signal. Used by one thread at a time.
final class PolyphaseResampler {
    /// Taps per phase: a compile-time constant so the dot product unrolls.
    static let taps = 32
    /// The least stopband attenuation (dB) `make` accepts: below 16-bit output's noise floor.
    static let minimumAttenuation = 90.0
    /// Upsampling factor and decimation factor (rates in lowest terms).
    let up: Int, down: Int
    let channels: Int
    /// Designed stopband attenuation in dB.
    let attenuation: Double
    /// `up` rows of `taps` coefficients, each row in input order (oldest first);
    /// 16-byte aligned (rows are 128 bytes).
    private let table: UnsafeMutablePointer<Float>
    /// Per channel: history then new input, planar.
    private let planes: UnsafeMutablePointer<Float>
    private let planeCapacity = 4_096
    /// Frames in each plane (history included).
    private var filled: Int
    /// Index in the planes of the newest frame the next output uses, and its phase (0 ..< up).
    private var base: Int, phase: Int

    /// The resampler for `inputRate` → `outputRate`, or nil where this design
    /// does not apply (not an upsampling step of at most 1.25×, an input
    /// under 40 kHz, more than 1,024 phases, or under `minimumAttenuation`).
    static func make(from inputRate: Int, to outputRate: Int, channels: Int) -> PolyphaseResampler? {
        guard inputRate >= 40_000, outputRate > inputRate, 4 * outputRate <= 5 * inputRate, channels >= 1 else { return nil }
        let g = gcd(inputRate, outputRate)
        let up = outputRate / g, down = inputRate / g
        guard up <= 1_024 else { return nil }
        let passEnd = 0.45 * Double(inputRate), stopBegin = Double(outputRate) - passEnd
        // Kaiser: A = 8 + 2.285 · Δω · N, with Δω the transition width in
        // radians per input sample and N the taps per phase.
        let attenuation = 8 + 2.285 * 2 * Double.pi * (stopBegin - passEnd) / Double(inputRate) * Double(taps)
        guard attenuation >= minimumAttenuation else { return nil }
        return PolyphaseResampler(up: up, down: down, channels: channels, cutoff: Double(outputRate) / 2 / Double(inputRate),
                                  attenuation: attenuation)
    }

    /// `cutoff` in cycles per input sample.
    private init(up: Int, down: Int, channels: Int, cutoff: Double, attenuation: Double) {
        self.up = up
        self.down = down
        self.channels = channels
        self.attenuation = attenuation
        let taps = Self.taps
        let length = up * taps
        let beta = attenuation > 50 ? 0.1102 * (attenuation - 8.7) : 0.5842 * pow(attenuation - 21, 0.4) + 0.07886 * (attenuation - 21)
        let center = Double(length - 1) / 2
        let norm = Self.besselI0(beta)
        // 16-byte aligned, so the coefficient loads can be aligned (folded into the multiplies).
        table = UnsafeMutableRawPointer.allocate(byteCount: length * MemoryLayout<Float>.size, alignment: 16)
            .bindMemory(to: Float.self, capacity: length)
        // Prototype h[k] at the rate up · input, gain `up` (each phase sums to ~1);
        // phase p uses h[p + up · j] on the input j frames before the newest,
        // stored oldest first: row p, column taps − 1 − j.
        for k in 0..<length {
            let t = Double(k) - center
            let x = 2 * cutoff * t / Double(up)
            let sinc = x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)
            let r = 2 * t / Double(length - 1)
            let window = Self.besselI0(beta * (max(0, 1 - r * r)).squareRoot()) / norm
            let h = 2 * cutoff * sinc * window
            let p = k % up, j = k / up
            table[p * taps + taps - 1 - j] = Float(h)
        }
        planes = .allocate(capacity: channels * planeCapacity)
        planes.initialize(repeating: 0, count: channels * planeCapacity)
        // Start with taps − 1 frames of silence, and the first output where the
        // filter's centre meets input frame 0 (no start-up delay).
        filled = taps - 1
        let start = (taps - 1) * up + Int(center.rounded())
        base = start / up
        phase = start % up
    }

    deinit {
        table.deallocate()
        planes.deallocate()
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    /// The zeroth-order modified Bessel function of the first kind (its series).
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let q = x * x / 4
        while term > 1e-17 * sum {
            term *= q / (k * k)
            sum += term
            k += 1
        }
        return sum
    }

    /// Takes up to `inputFrames` interleaved frames and writes up to
    /// `outputCapacity` interleaved output frames. Returns the frames consumed
    /// and produced; input not consumed must be offered again.
    func process(_ input: UnsafePointer<Float>, inputFrames: Int,
                 into output: UnsafeMutablePointer<Float>, outputCapacity: Int) -> (consumed: Int, produced: Int) {
        let take = min(inputFrames, planeCapacity - filled)
        if channels == 1 {
            (planes + filled).update(from: input, count: take)
        } else {
            for c in 0..<channels {
                let plane = planes + (c &* planeCapacity &+ filled)
                for i in 0..<take { plane[i] = input[i &* channels &+ c] }
            }
        }
        filled += take
        var made = 0
        let taps = Self.taps
        // Wrapping arithmetic in the loop: every index is bounded by the
        // capacities above (base < filled ≤ planeCapacity, phase < up).
        var base = self.base, phase = self.phase
        let history = planes + (1 &- taps)
        while made < outputCapacity && base < filled {
            let row = UnsafePointer(table + phase &* taps)
            if channels == 1 {
                output[made] = Self.dot(row, UnsafePointer(history + base))
            } else {
                for c in 0..<channels {
                    output[made &* channels &+ c] = Self.dot(row, UnsafePointer(history + (c &* planeCapacity &+ base)))
                }
            }
            made &+= 1
            phase &+= down
            while phase >= up {
                phase &-= up
                base &+= 1
            }
        }
        // Keep the taps − 1 frames before the next output's newest frame.
        let keep = base + 1 - taps
        if keep > 0 {
            let remaining = filled - keep
            for c in 0..<channels {
                let plane = planes + c * planeCapacity
                plane.update(from: plane + keep, count: remaining)
            }
            filled = remaining
            base -= keep
        }
        self.base = base
        self.phase = phase
        return (take, made)
    }

    /// The 32-tap dot product, four lanes at a time into one accumulator
    /// (written out: one multiply and one add per four taps, one horizontal sum).
    @inline(__always)
    private static func dot(_ coefficients: UnsafePointer<Float>, _ samples: UnsafePointer<Float>) -> Float {
        let c = UnsafeRawPointer(coefficients), s = UnsafeRawPointer(samples)
        @inline(__always) func term(_ k: Int) -> SIMD4<Float> {
            c.load(fromByteOffset: 16 &* k, as: SIMD4<Float>.self) * s.loadUnaligned(fromByteOffset: 16 &* k, as: SIMD4<Float>.self)
        }
        let a = (term(0) + term(1)) + (term(2) + term(3))
        let b = (term(4) + term(5)) + (term(6) + term(7))
        let v = a + b
        return (v[0] + v[2]) + (v[1] + v[3])
    }
}
