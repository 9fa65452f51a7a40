/// Mixes the current sound source(s) with transport fades, equal-power
/// crossfades and a ramped volume gain, producing stereo interleaved output.
///
/// Owned by ONE thread at a time (the audio thread in the player; the caller's
/// thread when rendering offline). Everything is allocated in `init`; `play`,
/// `pause`, `crossfade`, `setGain` and `render` never allocate, lock, or release
/// the last reference to a source: dropped sources are parked and handed back
/// through `takeRetired()` so the caller can release them on another thread.
public final class AmbienceRenderer: @unchecked Sendable {
    // @unchecked Sendable: the renderer is created on one thread and then handed
    // to exactly one other (the audio thread) before use; it is never shared.

    /// One playing source and its equal-power gain position θ in [0, 1]
    /// (gain = sin(θ·π/2)), moving toward `target` by `step` per frame.
    struct Voice {
        var source: SoundSource?
        var theta: Float = 0
        var target: Float = 0
        var step: Float = 0
    }

    /// Output sample rate, frames per second.
    public let sampleRate: Int
    /// Largest chunk rendered in one pass; larger requests are split.
    public let maxFrames: Int

    private static let voiceCount = 4
    private static let retiredCapacity = 16

    private var voices: ContiguousArray<Voice>
    private var retired: ContiguousArray<SoundSource?>
    private var retiredHead = 0
    private var retiredCount = 0

    // Transport fade: position p in [0, 1] (gain = smoothstep(p)).
    private var fadePosition: Float = 0
    private var fadeTarget: Float = 0
    private var fadeStep: Float = 0
    private var fadeRemaining = 0

    // Volume: linear gain ramped per sample.
    private var volume: Float = 1
    private var volumeTarget: Float = 1
    private var volumeStep: Float = 0
    private var volumeRemaining = 0

    private let voiceBuffer: UnsafeMutablePointer<Float>
    private let mixBuffer: UnsafeMutablePointer<Float>

    /// A paused renderer with no source and unity gain. Allocates all buffers
    /// for chunks of up to `maxFrames` frames. Any thread.
    public init(sampleRate: Int, maxFrames: Int = 4096) {
        self.sampleRate = sampleRate
        self.maxFrames = max(maxFrames, 16)
        voices = ContiguousArray(repeating: Voice(), count: Self.voiceCount)
        retired = ContiguousArray(repeating: nil, count: Self.retiredCapacity)
        voiceBuffer = .allocate(capacity: 2 * self.maxFrames)
        mixBuffer = .allocate(capacity: 2 * self.maxFrames)
        voiceBuffer.initialize(repeating: 0, count: 2 * self.maxFrames)
        mixBuffer.initialize(repeating: 0, count: 2 * self.maxFrames)
    }

    deinit {
        voiceBuffer.deallocate()
        mixBuffer.deallocate()
    }

    // MARK: - State

    /// True once a pause's fade-out has completed (output is exact zeros).
    public var isSilent: Bool { fadePosition <= 0 && fadeTarget <= 0 }
    /// True when the transport intends to play (fading in or playing).
    public var isPlaying: Bool { fadeTarget > 0 }
    /// The current linear volume gain (mid-ramp value while ramping).
    public var currentGain: Float { volume }
    /// True when at least one source is loaded.
    public var hasSource: Bool { voices.contains { $0.source != nil } }

    // MARK: - Transport

    /// Starts or resumes playback with a fade-in over `fadeFrames`. With a
    /// source, switches to it: crossfading if anything is audible, replacing
    /// otherwise. With nil, resumes the current source.
    public func play(_ source: SoundSource?, fadeFrames: Int) {
        if let source {
            if fadePosition > 0 && hasSource {
                crossfadeVoices(to: source, frames: fadeFrames)
            } else {
                replaceVoices(with: source)
            }
        }
        startFade(to: 1, fullFrames: fadeFrames)
    }

    /// Fades to silence over `fadeFrames`; the source is kept for `play(nil)`.
    public func pause(fadeFrames: Int) {
        startFade(to: 0, fullFrames: fadeFrames)
    }

    /// Moves the fade position to `target` at the rate of a full fade over
    /// `fullFrames` (a fade reversed midway takes proportionally less time).
    private func startFade(to target: Float, fullFrames: Int) {
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

    /// Switches to `source`: an equal-power crossfade over `frames` when anything
    /// is audible, otherwise (paused) the current source is simply replaced.
    public func crossfade(to source: SoundSource, frames: Int) {
        if fadePosition > 0 && hasSource && frames > 0 {
            crossfadeVoices(to: source, frames: frames)
        } else {
            replaceVoices(with: source)
        }
    }

    /// Ramps the volume gain linearly to `linear` over `rampFrames`, starting
    /// from the current (possibly mid-ramp) value, so rapid changes never jump.
    public func setGain(_ linear: Float, rampFrames: Int) {
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

    /// Removes and returns one dropped source, or nil. The caller must release
    /// it off the audio thread (e.g. send it to the main thread).
    public func takeRetired() -> SoundSource? {
        guard retiredCount > 0 else { return nil }
        let source = retired[retiredHead]
        retired[retiredHead] = nil  // not the last reference: `source` holds one
        retiredHead = (retiredHead + 1) % Self.retiredCapacity
        retiredCount -= 1
        return source
    }

    // MARK: - Rendering

    /// Renders `frames` stereo interleaved S16 frames into `out` (2·frames
    /// values), clamped to full scale. Owning thread only; real-time safe.
    @discardableResult
    public func render(into out: UnsafeMutablePointer<Int16>, frames: Int) -> RenderOutcome {
        var outcome = RenderOutcome(isSilent: isSilent, fadeOutCompleted: false, retiredPending: retiredCount)
        var done = 0
        while done < frames {
            let n = min(maxFrames, frames - done)
            let dst = out + 2 * done
            if let (source, gain) = steadySource() {
                // Nothing ramps: one pass from the source's block to S16, no mix buffer.
                source.render(into: voiceBuffer, frames: n)
                SampleConversion.convert(voiceBuffer, gain: gain, into: dst, count: 2 * n)
                done += n
                continue
            }
            let chunk = renderChunk(frames: n)
            if chunk.fadeOutCompleted { outcome.fadeOutCompleted = true }
            if chunk.isSilent && !chunk.fadeOutCompleted {
                dst.update(repeating: 0, count: 2 * n)
            } else {
                SampleConversion.convert(mixBuffer, gain: 1, into: dst, count: 2 * n)
            }
            done += n
        }
        outcome.isSilent = isSilent
        outcome.retiredPending = retiredCount
        return outcome
    }

    /// Like `render(into:frames:)` but writes floats (unclamped). For tests and
    /// offline analysis. Owning thread only; real-time safe.
    @discardableResult
    public func renderFloat(into out: UnsafeMutablePointer<Float>, frames: Int) -> RenderOutcome {
        var outcome = RenderOutcome(isSilent: isSilent, fadeOutCompleted: false, retiredPending: retiredCount)
        var done = 0
        while done < frames {
            let n = min(maxFrames, frames - done)
            let chunk = renderChunk(frames: n)
            if chunk.fadeOutCompleted { outcome.fadeOutCompleted = true }
            (out + 2 * done).update(from: mixBuffer, count: 2 * n)
            done += n
        }
        outcome.isSilent = isSilent
        outcome.retiredPending = retiredCount
        return outcome
    }

    /// The steady state, when the output is just `gain` × one source: exactly
    /// one voice, at full crossfade gain, audible, with no transport fade and no
    /// volume ramp in progress. Then `render` skips the mix buffer; the samples
    /// are the same as the general path's (x·1 + 0 = x, then one multiply).
    private func steadySource() -> (SoundSource, Float)? {
        guard fadeRemaining == 0, volumeRemaining == 0, fadePosition > 0 else { return nil }
        var found: SoundSource?
        for v in 0..<Self.voiceCount where voices[v].source != nil {
            guard found == nil, voices[v].theta >= 1, voices[v].target >= 1 else { return nil }
            found = voices[v].source
        }
        guard let found else { return nil }
        return (found, Self.smoothstep(fadePosition) * volume)
    }

    /// Renders `n ≤ maxFrames` frames into `mixBuffer`.
    private func renderChunk(frames n: Int) -> (isSilent: Bool, fadeOutCompleted: Bool) {
        let samples = 2 * n
        if isSilent {
            mixBuffer.update(repeating: 0, count: samples)
            return (true, false)
        }
        // The first voice stores into the mix buffer, later ones add to it.
        var mixed = false
        for v in 0..<Self.voiceCount where voices[v].source != nil {
            mixVoice(v, frames: n, accumulate: mixed)
            mixed = true
        }
        if !mixed { mixBuffer.update(repeating: 0, count: samples) }
        applyMaster(frames: n)
        let completed = isSilent
        if completed {
            // Exact zeros after the fade has reached 0 (no denormal tails).
            return (true, true)
        }
        return (false, false)
    }

    /// Renders voice `v` and stores (`accumulate` false) or adds it into
    /// `mixBuffer` with its crossfade gain.
    private func mixVoice(_ v: Int, frames n: Int, accumulate: Bool) {
        guard let source = voices[v].source else { return }
        source.render(into: voiceBuffer, frames: n)
        var voice = voices[v]
        if voice.theta == voice.target {
            let g = Self.equalPower(voice.theta)
            if accumulate {
                for i in 0..<(2 * n) { mixBuffer[i] += voiceBuffer[i] * g }
            } else {
                SampleConversion.scale(voiceBuffer, by: g, into: mixBuffer, count: 2 * n)
            }
        } else {
            if !accumulate { mixBuffer.update(repeating: 0, count: 2 * n) }
            for i in 0..<n {
                if voice.theta < voice.target {
                    voice.theta = min(voice.target, voice.theta + voice.step)
                } else if voice.theta > voice.target {
                    voice.theta = max(voice.target, voice.theta - voice.step)
                }
                let g = Self.equalPower(voice.theta)
                mixBuffer[2 * i] += voiceBuffer[2 * i] * g
                mixBuffer[2 * i + 1] += voiceBuffer[2 * i + 1] * g
            }
        }
        voices[v].theta = voice.theta
        if voice.theta <= 0 && voice.target <= 0 {
            retireVoice(v)
        }
    }

    /// Applies the transport fade and the volume ramp to `mixBuffer`.
    private func applyMaster(frames n: Int) {
        let steady = fadeRemaining == 0 && volumeRemaining == 0
        if steady {
            let g = Self.smoothstep(fadePosition) * volume
            if g != 1 {
                for i in 0..<(2 * n) { mixBuffer[i] *= g }
            }
            return
        }
        for i in 0..<n {
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
            let g = Self.smoothstep(fadePosition) * volume
            mixBuffer[2 * i] *= g
            mixBuffer[2 * i + 1] *= g
        }
    }

    // MARK: - Voices

    private func crossfadeVoices(to source: SoundSource, frames: Int) {
        let step = frames > 0 ? 1 / Float(frames) : 1
        for v in 0..<Self.voiceCount where voices[v].source != nil {
            voices[v].target = 0
            voices[v].step = step
        }
        let slot = freeVoiceSlot()
        voices[slot] = Voice(source: source, theta: 0, target: 1, step: step)
    }

    private func replaceVoices(with source: SoundSource) {
        for v in 0..<Self.voiceCount where voices[v].source != nil {
            retireVoice(v)
        }
        voices[0] = Voice(source: source, theta: 1, target: 1, step: 0)
    }

    /// A free voice slot, retiring the quietest voice when all are busy.
    private func freeVoiceSlot() -> Int {
        var quietest = 0
        for v in 0..<Self.voiceCount {
            if voices[v].source == nil { return v }
            if voices[v].theta < voices[quietest].theta { quietest = v }
        }
        retireVoice(quietest)
        return quietest
    }

    /// Moves voice `v`'s source to the retired ring without releasing it.
    private func retireVoice(_ v: Int) {
        guard let source = voices[v].source else { return }
        if retiredCount < Self.retiredCapacity {
            retired[(retiredHead + retiredCount) % Self.retiredCapacity] = source
            retiredCount += 1
        } else {
            // The caller is not draining `takeRetired()`. Leaking is bounded and
            // safer than running a deinit on the audio thread.
            _ = Unmanaged<AnyObject>.passRetained(source as AnyObject)
        }
        voices[v] = Voice()
    }

    @inline(__always)
    static func equalPower(_ theta: Float) -> Float {
        theta >= 1 ? 1 : (theta <= 0 ? 0 : DSPMath.sin(theta * (Float.pi / 2)))
    }

    @inline(__always)
    static func smoothstep(_ p: Float) -> Float {
        p * p * (3 - 2 * p)
    }
}
