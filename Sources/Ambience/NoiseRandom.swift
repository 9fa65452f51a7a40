// SPDX-License-Identifier: Apache-2.0
/// A small, fast, seeded PCG32 generator for noise (not for cryptography).
///
/// A value type: each generator owns its state, so two channels with two
/// generators are fully independent. Real-time safe.
public struct NoiseRandom: Sendable {
    private var state: UInt64
    private let increment: UInt64

    /// A generator whose sequence is fully determined by `seed` and `stream`.
    public init(seed: UInt64, stream: UInt64 = 0) {
        increment = (stream << 1) | 1
        state = 0
        _ = nextUInt32()
        state &+= seed
        _ = nextUInt32()
    }

    /// The next 32 uniformly distributed bits (PCG-XSH-RR).
    @inline(__always)
    public mutating func nextUInt32() -> UInt32 {
        let old = state
        state = old &* 6_364_136_223_846_793_005 &+ increment
        let xorShifted = UInt32(truncatingIfNeeded: ((old >> 18) ^ old) >> 27)
        let rotation = UInt32(truncatingIfNeeded: old >> 59)
        return (xorShifted >> rotation) | (xorShifted << ((~rotation &+ 1) & 31))
    }

    /// A uniform value in [-1, 1).
    @inline(__always)
    public mutating func nextBipolar() -> Float {
        Float(Int32(bitPattern: nextUInt32())) * (1.0 / 2_147_483_648.0)
    }

    /// A uniform value in [0, 1).
    @inline(__always)
    public mutating func nextUnit() -> Float {
        Float(nextUInt32() >> 8) * (1.0 / 16_777_216.0)
    }
}
