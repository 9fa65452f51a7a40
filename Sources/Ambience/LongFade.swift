// SPDX-License-Identifier: Apache-2.0
/// The renderer's long fade: a multiplier in [0, 1] that moves along the
/// volume curve over any duration (a frame to an hour), so a sleep timer's
/// fade-out or a wake-up fade-in sounds even: equal dB per unit of time over
/// the curve's range (`VolumeCurve`, 50 dB). The multiplier is the curve's
/// gain less the curve's floor (−50 dB), rescaled so that position 1 is
/// exactly 1 and position 0 exactly 0: (g(ℓ) − g₀)/(1 − g₀). Near the top
/// this is the curve itself; it bends smoothly into exact silence at the
/// bottom (twice the curve's dB rate at −50 dB), so reaching 0 is no step.
///
/// The position (a level on the curve) moves linearly in time. The gain is
/// computed from it once per segment of `segmentFrames` frames and ramped
/// linearly inside the segment, so the audio thread evaluates the curve once
/// per 64 frames, not per frame. A plain value, stepped the same way by
/// `MasterGain.apply` and `.advance`, so a state restored after a rewind and
/// advanced equals the one that rendered the frames. Allocates nothing.
struct LongFade: Equatable {
    /// Frames per gain segment (the curve is evaluated at segment ends).
    static let segmentFrames = 64
    /// The curve's floor, g₀ = −50 dB: subtracted so that position 0 is silence.
    static let floorGain = DSPMath.exp10(-VolumeCurve.rangeDB / 20)

    /// The position on the curve: 1 = unity, 0 = silence.
    private(set) var level: Double = 1
    /// Where the fade is heading.
    private(set) var target: Double = 1
    /// The position's change per frame.
    private var increment: Double = 0
    /// Frames of the fade still to step (0: steady at `target`).
    private(set) var remaining = 0
    /// The multiplier of the current frame.
    private(set) var gain: Float = 1
    private var gainStep: Float = 0
    private var segmentLeft = 0

    /// The multiplier for a position on the curve (0 → 0, 1 → 1).
    static func gain(atLevel level: Double) -> Float {
        guard level > 0, !level.isNaN else { return 0 }
        guard level < 1 else { return 1 }
        let curve = DSPMath.exp10(-VolumeCurve.rangeDB * (1 - level) / 20)
        return Float(max(0, (curve - floorGain) / (1 - floorGain)))
    }

    /// The position whose multiplier is `multiplier` in [0, 1] (the inverse of `gain(atLevel:)`).
    static func level(ofMultiplier multiplier: Double) -> Double {
        guard multiplier > 0, !multiplier.isNaN else { return 0 }
        guard multiplier < 1 else { return 1 }
        let curve = multiplier * (1 - floorGain) + floorGain
        return min(1, max(0, 1 + 20 * DSPMath.log10(curve) / VolumeCurve.rangeDB))
    }

    /// Heads for the multiplier `to` (clamped to [0, 1]) over `frames` frames,
    /// from the current (possibly mid-fade) position; at once when `frames` ≤ 0.
    mutating func start(to multiplier: Double, frames: Int) {
        let clamped = multiplier.isNaN ? 0 : min(1, max(0, multiplier))
        target = clamped >= 1 ? 1 : Self.level(ofMultiplier: clamped)
        segmentLeft = 0
        gainStep = 0
        if frames <= 0 || target == level {
            level = target
            remaining = 0
            gain = Self.gain(atLevel: target)
            increment = 0
        } else {
            remaining = frames
            increment = (target - level) / Double(frames)
        }
    }

    /// One frame's step (nothing once the target is reached).
    @inline(__always)
    mutating func step() {
        guard remaining > 0 else { return }
        if segmentLeft == 0 { nextSegment() }
        gain += gainStep
        segmentLeft -= 1
        remaining -= 1
        if remaining == 0 {
            level = target
            gain = Self.gain(atLevel: target)
        }
    }

    /// Plans the next segment: the position at its end (computed from the
    /// frames left, so an hour's fade accumulates no error) and the gain step
    /// that reaches that position's gain at its last frame.
    private mutating func nextSegment() {
        let n = min(Self.segmentFrames, remaining)
        let end = remaining == n ? target : target - increment * Double(remaining - n)
        level = end
        gainStep = (Self.gain(atLevel: end) - gain) / Float(n)
        segmentLeft = n
    }
}
