// SPDX-License-Identifier: Apache-2.0
/// The perceptual volume curve of the software volume mode. Any thread.
///
/// A level in [0, 1] maps to gain_dB = −50·(1 − level): level 1 is 0 dB (unity),
/// level 0.5 is −25 dB, and the smallest non-zero level approaches −50 dB.
/// Level 0 (or less) is exact silence. Levels above 1 are treated as 1.
public enum VolumeCurve {
    /// The attenuation at the bottom of the curve, just above level 0.
    public static let rangeDB: Double = 50

    /// Linear gain for `level` (0 → 0.0, 1 → 1.0).
    public static func gain(level: Double) -> Float {
        guard level > 0, !level.isNaN else { return 0 }
        let clamped = min(level, 1)
        return Float(DSPMath.exp10(-rangeDB * (1 - clamped) / 20))
    }

    /// The level whose gain is `gain` (inverse of `gain(level:)`), clamped to
    /// [0, 1]; gains at or below −50 dB give 0.
    public static func level(gain: Float) -> Double {
        guard gain > 0, !gain.isNaN else { return 0 }
        let db = 20 * DSPMath.log10(Double(gain))
        return min(1, max(0, 1 + db / rangeDB))
    }
}
