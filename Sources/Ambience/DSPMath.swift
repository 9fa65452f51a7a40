// SPDX-License-Identifier: Apache-2.0
/// The few transcendental functions the DSP needs (filter coefficients,
/// droplet oscillators, the equal-power crossfade, the volume curve), in pure
/// Swift so that this module imports no C library. Double precision to within
/// a few ulp of the C library (≤ 1e-15 relative) over the ranges used here (checked against libm
/// in `DSPMathTests`); the `Float` forms round the Double result.
/// Pure functions: any thread, no allocation, safe on the audio thread.
public enum DSPMath {
    private static let ln2Hi = 6.93147180369123816490e-01  // ln 2, upper bits (exact in k·ln2Hi)
    private static let ln2Lo = 1.90821492927058770002e-10  // ln 2 − ln2Hi
    private static let ln2 = 0.693147180559945309417232121458
    private static let ln10 = 2.302585092994045684017991454684
    private static let ln10Lo = -2.1707562233822494e-16  // ln 10 − Double(ln 10)
    private static let halfPiHi = 1.57079632673412561417e+00  // π/2, upper bits
    private static let halfPiLo = 6.07710050650619224932e-11  // π/2 − halfPiHi

    /// e^x.
    public static func exp(_ x: Double) -> Double {
        if x.isNaN { return x }
        if x > 709.78 { return .infinity }
        if x < -745.2 { return 0 }
        let k = (x / ln2).rounded()
        let r = (x - k * ln2Hi) - k * ln2Lo  // |r| ≤ ln2/2
        // Taylor series of e^r to r^14/14! (< 1e-17 for |r| ≤ 0.35), Horner form.
        var sum = 1.0
        for n in stride(from: 14, through: 1, by: -1) { sum = 1 + sum * r / Double(n) }
        return scaled(sum, byPowerOfTwo: Int(k))
    }

    /// 10^x. The rounding error of x·ln 10 (recovered with a fused
    /// multiply-add) is applied as a first-order correction.
    public static func exp10(_ x: Double) -> Double {
        let y = x * ln10
        let error = (-y).addingProduct(x, ln10) + x * ln10Lo
        return exp(y) * (1 + error)
    }

    /// log10(x); nil-free like libm: 0 → −∞, negative or NaN → NaN.
    public static func log10(_ x: Double) -> Double { log(x) / ln10 }

    /// The natural logarithm.
    public static func log(_ x: Double) -> Double {
        if x.isNaN || x < 0 { return .nan }
        if x == 0 { return -.infinity }
        if x.isInfinite { return x }
        var e = Double(Int(x.exponent))
        var m = x.significand  // [1, 2)
        if m > 2.0.squareRoot() { m /= 2; e += 1 }
        // ln m = 2·atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.172: series to s^27.
        let s = (m - 1) / (m + 1)
        let s2 = s * s
        var sum = 0.0
        for n in stride(from: 27, through: 1, by: -2) { sum = 1 / Double(n) + s2 * sum }
        return e * ln2Hi + (e * ln2Lo + 2 * s * sum)
    }

    /// sin(x).
    public static func sin(_ x: Double) -> Double { sinCos(x).sin }

    /// cos(x).
    public static func cos(_ x: Double) -> Double { sinCos(x).cos }

    /// sin and cos of `x` by reduction to |r| ≤ π/4 (accurate for |x| up to ~10^6).
    static func sinCos(_ x: Double) -> (sin: Double, cos: Double) {
        guard x.isFinite else { return (.nan, .nan) }
        let k = (x / (halfPiHi + halfPiLo)).rounded()
        let r = (x - k * halfPiHi) - k * halfPiLo
        let r2 = r * r
        // Taylor series to r^17 and r^18 (< 1e-17 for |r| ≤ π/4), Horner form.
        var s = 1.0, c = 1.0
        for n in stride(from: 16, through: 2, by: -2) {
            s = 1 - s * r2 / Double(n * (n + 1))
            c = 1 - c * r2 / Double((n - 1) * n)
        }
        s *= r
        switch Int(k.truncatingRemainder(dividingBy: 4) + 4) % 4 {
        case 0: return (s, c)
        case 1: return (c, -s)
        case 2: return (-s, -c)
        default: return (-c, s)
        }
    }

    /// e^x in Float.
    @inline(__always) public static func exp(_ x: Float) -> Float { Float(exp(Double(x))) }
    /// sin(x) in Float.
    @inline(__always) public static func sin(_ x: Float) -> Float { Float(sinCos(Double(x)).sin) }
    /// cos(x) in Float.
    @inline(__always) public static func cos(_ x: Float) -> Float { Float(sinCos(Double(x)).cos) }

    /// `value · 2^power`, exact (in two steps so that neither factor overflows).
    private static func scaled(_ value: Double, byPowerOfTwo power: Int) -> Double {
        let half = power / 2
        return value * Double(sign: .plus, exponent: half, significand: 1)
            * Double(sign: .plus, exponent: power - half, significand: 1)
    }
}
