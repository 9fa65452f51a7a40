// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
@testable import Ambience
import Testing

/// The pure-Swift math of the DSP agrees with the C library over the ranges
/// the sounds and the volume curve use (and a margin beyond them).
@Suite struct DSPMathTests {
    /// The largest relative difference (absolute below 1) of `f` from `reference` over `inputs`, and where.
    func worst(_ inputs: [Double], _ f: (Double) -> Double, _ reference: (Double) -> Double) -> (error: Double, at: Double) {
        var result = (error: 0.0, at: 0.0)
        for x in inputs {
            let b = reference(x)
            let error = abs(f(x) - b) / max(1, abs(b))
            if error > result.error { result = (error, x) }
        }
        return result
    }

    @Test func expAndExp10MatchLibm() {
        let inputs = (-4000...4000).map { Double($0) / 100 }  // −40 … 40
        let e = worst(inputs, { DSPMath.exp($0) }, { Glibc.exp($0) })
        #expect(e.error <= 1e-15, "exp(\(e.at))")
        let ten = worst(inputs.map { $0 / 8 }, DSPMath.exp10, { pow(10, $0) })
        #expect(ten.error <= 1e-15, "exp10(\(ten.at))")
        #expect(DSPMath.exp(0.0) == 1 && DSPMath.exp10(0.0) == 1)
        #expect(DSPMath.exp(800.0) == .infinity && DSPMath.exp(-800.0) == 0 && DSPMath.exp(Double.nan).isNaN)
    }

    @Test func log10MatchesLibm() {
        let inputs = (0..<1200).map { 1e-9 * Glibc.pow(1.0371, Double($0)) }  // 1e-9 … ~1e10
        let e = worst(inputs, DSPMath.log10, { Glibc.log10($0) })
        #expect(e.error <= 1e-15, "log10(\(e.at))")
        #expect(DSPMath.log10(1) == 0 && DSPMath.log10(10) == 1 && DSPMath.log10(0) == -.infinity && DSPMath.log10(-1).isNaN)
    }

    @Test func sinAndCosMatchLibmOverSeveralTurns() {
        let inputs = (-20_000...20_000).map { Double($0) / 1000 }  // about ±3 turns
        let s = worst(inputs, DSPMath.sin, { Glibc.sin($0) })
        let c = worst(inputs, DSPMath.cos, { Glibc.cos($0) })
        #expect(s.error < 1e-15, "sin(\(s.at))")
        #expect(c.error < 1e-15, "cos(\(c.at))")
    }

    @Test func floatFormsRoundTheDoubleResult() {
        for i in 0...1000 {
            let x = Float(i) / 1000 * (Float.pi / 2)
            #expect(abs(DSPMath.sin(x) - sinf(x)) <= x.ulp.magnitude + Float(1).ulp, "sinf(\(x))")
            #expect(abs(DSPMath.cos(x) - cosf(x)) <= Float(1).ulp, "cosf(\(x))")
            let y = -Float(i) / 100
            #expect(abs(DSPMath.exp(y) - expf(y)) <= expf(y).ulp, "expf(\(y))")
        }
    }
}
