/// The renderer's master stage: the transport fade (position p in [0, 1],
/// gain = smoothstep(p)) and the linear volume gain, each ramped per frame.
///
/// A plain value, so the renderer can keep a copy of it at every chunk it
/// renders and, after a rewind, restore the state it had at any queued frame
/// (`RenderHistory`). `apply` and `advance` step it with the same arithmetic,
/// so a restored-and-advanced state equals the one that rendered the frames.
struct MasterGain: Equatable {
    var fadePosition: Float = 0
    var fadeTarget: Float = 0
    var fadeStep: Float = 0
    var fadeRemaining = 0
    var volume: Float = 1
    var volumeTarget: Float = 1
    var volumeStep: Float = 0
    var volumeRemaining = 0

    /// True once a pause's fade-out has completed (output is exact zeros).
    var isSilent: Bool { fadePosition <= 0 && fadeTarget <= 0 }
    /// True when the transport intends to play (fading in or playing).
    var isPlaying: Bool { fadeTarget > 0 }
    /// Nothing ramps: every frame gets the same gain.
    var isSteady: Bool { fadeRemaining == 0 && volumeRemaining == 0 }
    /// The gain of a steady state (transport × volume).
    var steadyGain: Float { AmbienceRenderer.smoothstep(fadePosition) * volume }

    /// Moves the fade position to `target` at the rate of a full fade over
    /// `fullFrames` (a fade reversed midway takes proportionally less time).
    mutating func startFade(to target: Float, fullFrames: Int) {
        fadeTarget = target
        let frames = Int((abs(target - fadePosition) * Float(max(fullFrames, 0))).rounded(.up))
        if frames <= 0 {
            fadePosition = target
            fadeRemaining = 0
        } else {
            fadeRemaining = frames
            fadeStep = (target - fadePosition) / Float(frames)
        }
    }

    /// Ramps the volume linearly to `linear` over `rampFrames` from its current value.
    mutating func setGain(_ linear: Float, rampFrames: Int) {
        let target = linear.isNaN ? 0 : max(0, linear)
        volumeTarget = target
        if rampFrames <= 0 {
            volume = target
            volumeRemaining = 0
        } else {
            volumeRemaining = rampFrames
            volumeStep = (target - volume) / Float(rampFrames)
        }
    }

    /// One frame's step of both ramps.
    @inline(__always)
    private mutating func step() {
        if fadeRemaining > 0 {
            fadePosition += fadeStep
            fadeRemaining -= 1
            if fadeRemaining == 0 { fadePosition = fadeTarget }
        }
        if volumeRemaining > 0 {
            volume += volumeStep
            volumeRemaining -= 1
            if volumeRemaining == 0 { volume = volumeTarget }
        }
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
