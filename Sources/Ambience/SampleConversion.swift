// SPDX-License-Identifier: Apache-2.0
/// Block kernels of the output path: float → S16 with gain, clamping and
/// rounding, written so the compiler vectorizes them (no traps, no branches).
/// Any thread; real-time safe (no allocation, no locks).
public enum SampleConversion {
    /// Float → S16: `x · 32767`, clamped to ±32767, rounded half away from
    /// zero; NaN gives 0.
    ///
    /// Bit-identical to the straightforward
    /// `Int16(c + (c >= 0 ? 0.5 : -0.5))` with `c` the clamped value (checked
    /// over every Float bit pattern), but without `Int16(Float)`'s range
    /// check, which stops vectorization: the truncation is done with the
    /// 2²³ trick (adding 2²³ rounds to an integer, a compare corrects
    /// round-up to floor, and the integer is read from the low mantissa bits).
    @inline(__always)
    public static func toInt16(_ x: Float) -> Int16 {
        let v = x * 32767
        let w = v == v ? v : 0  // NaN → 0
        let a = Float(bitPattern: w.bitPattern & 0x7FFF_FFFF)  // |w|
        // |c| + 0.5 in float, exactly as c + (c >= 0 ? 0.5 : -0.5) would give it.
        let m = (a < 32767 ? a : 32767) + 0.5
        let magic: Float = 8_388_608  // 2²³: m + 2²³ has no fraction bits left
        let nearest = (m + magic) - magic
        let floor = nearest - (nearest > m ? 1 : 0)  // = trunc(m), as m > 0
        let magnitude = Int32(bitPattern: (floor + magic).bitPattern &- magic.bitPattern)
        let sign = Int32(bitPattern: w.bitPattern) >> 31  // 0 or −1
        // Always within ±32767: `clamping` only lets the compiler pack with saturation.
        return Int16(clamping: (magnitude ^ sign) &- sign)
    }

    /// Writes `toInt16(input[i] · gain)` for `count` samples to `out`.
    public static func convert(_ input: UnsafePointer<Float>, gain: Float,
                               into out: UnsafeMutablePointer<Int16>, count: Int) {
        for i in 0..<count { out[i] = toInt16(input[i] * gain) }
    }

    /// Writes `input[i] · gain` for `count` samples to `out` (a scaled copy;
    /// unlike `memcpy` followed by a scaling pass it reads the data once).
    public static func scale(_ input: UnsafePointer<Float>, by gain: Float,
                             into out: UnsafeMutablePointer<Float>, count: Int) {
        for i in 0..<count { out[i] = input[i] * gain }
    }
}
