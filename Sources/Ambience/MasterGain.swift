// SPDX-License-Identifier: Apache-2.0
/// The renderer's master stage: the transport fade (position p in [0, 1],
/// gain = smoothstep(p)), the linear volume gain, the long fade (a multiplier
/// moving along the volume curve, `LongFade`) and the mute multiplier, each
/// stepped per frame. Output gain = smoothstep(p) × volume × long fade × mute.
///
/// A plain value, so the renderer can keep a copy of it at every chunk it
/// renders and, after a rewind, restore the state it had at any queued frame
/// (`RenderHistory`). `apply` and `advance` step it with the same arithmetic,
/// so a restored-and-advanced state equals the one that rendered the frames.
struct MasterGain: Equatable {
    /// The transport fade's position p (gain smoothstep(p)): 0 paused, 1 playing.
    var fade = Ramp(value: 0)
    /// The linear volume gain.
    var gain = Ramp(value: 1)
    /// The long fade's multiplier (sleep timer, schedules).
    var longFade = LongFade()
    /// The mute multiplier: 0 muted, 1 not; ramped linearly over a short time.
    var mute = Ramp(value: 1)

    var fadePosition: Float { fade.value }
    var volume: Float { gain.value }
    /// True once a pause's fade-out has completed (output is exact zeros).
    var isSilent: Bool { fade.value <= 0 && fade.target <= 0 }
    /// True when the transport intends to play (fading in or playing).
    var isPlaying: Bool { fade.target > 0 }
    /// Nothing ramps: every frame gets the same gain.
    var isSteady: Bool { fade.remaining == 0 && gain.remaining == 0 && longFade.remaining == 0 && mute.remaining == 0 }
    /// True while the long fade moves.
    var isLongFading: Bool { longFade.remaining > 0 }
    /// The gain of the current frame (transport × volume × long fade × mute).
    var steadyGain: Float { AmbienceRenderer.smoothstep(fade.value) * gain.value * longFade.gain * mute.value }

    /// Moves the fade position to `target` at the rate of a full fade over
    /// `fullFrames` (a fade reversed midway takes proportionally less time).
    mutating func startFade(to target: Float, fullFrames: Int) {
        fade.start(to: target, frames: Int((abs(target - fade.value) * Float(max(fullFrames, 0))).rounded(.up)))
    }

    /// Ramps the volume linearly to `linear` over `rampFrames` from its current value.
    mutating func setGain(_ linear: Float, rampFrames: Int) {
        gain.start(to: linear.isNaN ? 0 : max(0, linear), frames: rampFrames)
    }

    /// Moves the long fade's multiplier to `multiplier` in [0, 1] along the
    /// volume curve over `frames` (at once when 0), from where it is now.
    mutating func startLongFade(to multiplier: Double, frames: Int) {
        longFade.start(to: multiplier, frames: frames)
    }

    /// Ramps the mute multiplier to 0 (`muted`) or 1 over `rampFrames`.
    mutating func setMuted(_ muted: Bool, rampFrames: Int) {
        let target: Float = muted ? 0 : 1
        guard target != mute.target else { return }
        mute.start(to: target, frames: Int((abs(target - mute.value) * Float(max(rampFrames, 0))).rounded(.up)))
    }

    /// One frame's step of every stage.
    @inline(__always)
    private mutating func step() {
        fade.step()
        gain.step()
        longFade.step()
        mute.step()
    }

    /// Multiplies `n` stereo frames of `buffer` by the (ramping) gain.
    mutating func apply(to buffer: UnsafeMutablePointer<Float>, frames n: Int) {
        if isSteady {
            let g = steadyGain
            if g != 1 {
                for i in 0..<(2 * n) { buffer[i] *= g }
            }
            return
        }
        for i in 0..<n {
            step()
            let g = steadyGain
            buffer[2 * i] *= g
            buffer[2 * i + 1] *= g
        }
    }

    /// Steps the ramps over `frames` frames without output (to reach a frame
    /// inside a recorded chunk).
    mutating func advance(frames: Int) {
        var left = frames
        while left > 0 && !isSteady {
            step()
            left -= 1
        }
    }
}

/// A value moving linearly to a target, one step per frame, landing exactly
/// on the target at the last step. The transport fade, the volume gain and
/// the mute multiplier of `MasterGain` are one each.
struct Ramp: Equatable {
    var value: Float
    var target: Float
    var increment: Float = 0
    var remaining = 0

    init(value: Float) {
        self.value = value
        target = value
    }

    /// Heads for `target` over `frames` frames; at once when `frames` <= 0.
    mutating func start(to target: Float, frames: Int) {
        self.target = target
        if frames <= 0 {
            value = target
            remaining = 0
        } else {
            remaining = frames
            increment = (target - value) / Float(frames)
        }
    }

    /// One frame's step (nothing once the target is reached).
    @inline(__always)
    mutating func step() {
        guard remaining > 0 else { return }
        value += increment
        remaining -= 1
        if remaining == 0 { value = target }
    }
}
