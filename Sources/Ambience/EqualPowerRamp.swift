// SPDX-License-Identifier: Apache-2.0
/// A voice's crossfade while its position θ steps linearly toward its
/// target: the equal-power gain sin(θ·π/2) of each frame comes from a
/// phasor rotated by the step's angle (set exactly when the crossfade
/// starts, double precision, carried across chunks so the gains do not
/// depend on how frames are chunked), not from a sine per frame, which made
/// a switch's refill after a rewind cost about three times its layers.
/// Where θ reaches the target the target's exact gain takes over. Owning
/// thread of the renderer; real-time safe.
enum EqualPowerRamp {
    /// A unit phasor: sin and cos of an angle.
    struct Phasor {
        var sin: Double, cos: Double

        init(angle: Double) {
            let both = DSPMath.sinCos(angle)
            sin = both.sin
            cos = both.cos
        }
    }

    /// Adds `source` × gain into `mix` for `frames` stereo frames as the
    /// voice's θ moves toward its target by its step a frame (θ and the
    /// phasor updated in `voice`).
    static func mix(_ source: UnsafePointer<Float>, into mix: UnsafeMutablePointer<Float>, frames: Int,
                    _ voice: inout AmbienceRenderer.Voice) {
        var theta = voice.theta
        let target = voice.target, step = voice.step
        let rising = theta < target
        var s = voice.phase.sin, c = voice.phase.cos
        let turnSin = voice.turn.sin, turnCos = voice.turn.cos
        let last = AmbienceRenderer.equalPower(target)
        for i in 0..<frames {
            let g: Float
            if theta != target {
                theta = rising ? min(target, theta + step) : max(target, theta - step)
                (s, c) = (s * turnCos + c * turnSin, c * turnCos - s * turnSin)
                g = theta == target ? last : (theta >= 1 ? 1 : (theta <= 0 ? 0 : Float(s)))
            } else {
                g = last
            }
            mix[2 * i] += source[2 * i] * g
            mix[2 * i + 1] += source[2 * i + 1] * g
        }
        voice.theta = theta
        voice.phase.sin = s
        voice.phase.cos = c
    }
}
