// SPDX-License-Identifier: Apache-2.0
/// Mixes the current sound source(s) with transport fades, equal-power
/// crossfades, a ramped volume gain, a long fade along the volume curve and a
/// mute multiplier, producing stereo interleaved output.
///
/// Owned by ONE thread at a time (the audio thread in the player; the caller's
/// thread when rendering offline). Everything is allocated in `init`; `play`,
/// `pause`, `crossfade`, `setGain` and `render` never allocate, lock, or release
/// the last reference to a source: dropped sources are parked and handed back
/// through `takeRetired()` so the caller can release them on another thread.
///
/// With a history (`historyFrames` > 0) it can also take back what it rendered
/// last: `rewind(frames:)` after the device dropped that many queued frames,
/// then the next `play`/`pause`/`crossfade`/`setGain`/`longFade`/`setMuted` applies from the rewound
/// frame, and `render` renders those frames again from their recorded dry mix
/// (see `RenderHistory`).
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
        /// sin and cos of θ·π/2 while it moves, and of the step's angle (`EqualPowerRamp`).
        var phase = EqualPowerRamp.Phasor(angle: 0)
        var turn = EqualPowerRamp.Phasor(angle: 0)
    }

    /// Output sample rate, frames per second.
    public let sampleRate: Int
    /// Largest chunk rendered in one pass; larger requests are split.
    public let maxFrames: Int

    private static let voiceCount = 4

    private var voices: ContiguousArray<Voice>
    private var retired = RetiredSources()

    // Transport fade, volume, long fade and mute, stepped per frame. Internal,
    // not private: the long fade's and mute's requests live in
    // `AmbienceRenderer+MasterStages` (owning thread only, like the rest).
    var master = MasterGain()
    var history: RenderHistory
    // A pending replay either re-renders the whole recorded mix (`replayMix`) or,
    // after a switch, feeds the recorded mix to the one voice it came from
    // (`replaySlot`) while the new voice renders beside it.
    private var replayMix = false
    private var replaySlot = -1
    // A switch requested while a whole-mix replay can't become a voice replay
    // waits for the replay's end (where it would have applied without rewinding).
    private var deferredSource: SoundSource?
    private var deferredFrames = 0
    private var deferredZeroFramesCrossfade = false

    private let voiceBuffer: UnsafeMutablePointer<Float>
    private let mixBuffer: UnsafeMutablePointer<Float>

    /// A paused renderer with no source and unity gain. Allocates all buffers
    /// for chunks of up to `maxFrames` frames, and a history of the last
    /// `historyFrames` frames for rewinds (0: no rewinding). Any thread.
    public init(sampleRate: Int, maxFrames: Int = 4096, historyFrames: Int = 0) {
        self.sampleRate = sampleRate
        self.maxFrames = max(maxFrames, 16)
        history = RenderHistory(capacity: historyFrames, minChunkFrames: min(self.maxFrames, 64))
        voices = ContiguousArray(repeating: Voice(), count: Self.voiceCount)
        voiceBuffer = .allocate(capacity: 2 * self.maxFrames)
        mixBuffer = .allocate(capacity: 2 * self.maxFrames)
        voiceBuffer.initialize(repeating: 0, count: 2 * self.maxFrames)
        mixBuffer.initialize(repeating: 0, count: 2 * self.maxFrames)
    }

    deinit {
        voiceBuffer.deallocate()
        mixBuffer.deallocate()
        history.deallocate()
    }

    // MARK: - State

    /// True once a pause's fade-out has completed (output is exact zeros).
    public var isSilent: Bool { master.isSilent }
    /// True when the transport intends to play (fading in or playing).
    public var isPlaying: Bool { master.isPlaying }
    /// The current linear volume gain (mid-ramp value while ramping).
    public var currentGain: Float { master.volume }
    /// True when at least one source is loaded.
    public var hasSource: Bool { voices.contains { $0.source != nil } }

    // MARK: - Transport

    /// Starts or resumes playback with a fade-in over `fadeFrames`. With a
    /// source, switches to it: crossfading if anything is audible, replacing
    /// otherwise. With nil, resumes the current source.
    public func play(_ source: SoundSource?, fadeFrames: Int) {
        history.requestApplied()
        if let source { switchVoices(to: source, frames: fadeFrames, zeroFramesCrossfade: true) }
        master.startFade(to: 1, fullFrames: fadeFrames)
    }

    /// Fades to silence over `fadeFrames`; the source is kept for `play(nil)`.
    public func pause(fadeFrames: Int) {
        history.requestApplied()
        master.startFade(to: 0, fullFrames: fadeFrames)
    }

    /// Switches to `source`: an equal-power crossfade over `frames` when anything
    /// is audible, otherwise (paused) the current source is simply replaced.
    public func crossfade(to source: SoundSource, frames: Int) {
        history.requestApplied()
        switchVoices(to: source, frames: frames, zeroFramesCrossfade: false)
    }

    /// Ramps the volume gain linearly to `linear` over `rampFrames`, starting
    /// from the current (possibly mid-ramp) value, so rapid changes never jump.
    public func setGain(_ linear: Float, rampFrames: Int) {
        history.requestApplied()
        master.setGain(linear, rampFrames: rampFrames)
    }

    /// Crossfades to `source` when audible (and `frames` > 0 unless
    /// `zeroFramesCrossfade`), else replaces the voices. During a whole-mix
    /// replay the recorded mix feeds the old voice if it was one steady
    /// voice; otherwise the switch waits for the replay's end.
    private func switchVoices(to source: SoundSource, frames: Int, zeroFramesCrossfade: Bool) {
        if isSilent && history.replayRemaining > 0 {
            // Paused in the middle of a replay (see `renderChunk`): the frames
            // kept for resuming belong to the sound being replaced.
            history.cancelReplay()
            replayMix = false
            replaySlot = -1
            if let dropped = deferredSource { retired.park(dropped) }
            deferredSource = nil
        }
        if replayMix && history.replayRemaining > 0 {
            if let slot = singleSteadyVoice(), history.replaySpanVoiceSteady {
                replayMix = false
                replaySlot = slot
            } else {
                if let dropped = deferredSource { retired.park(dropped) }
                deferredSource = source
                deferredFrames = frames
                deferredZeroFramesCrossfade = zeroFramesCrossfade
                return
            }
        }
        if master.fadePosition > 0 && hasSource && (frames > 0 || zeroFramesCrossfade) {
            crossfadeVoices(to: source, frames: frames)
        } else {
            replaceVoices(with: source)
        }
    }

    // MARK: - Rewinding

    /// How many of the frames rendered last may be taken back with
    /// `rewind(frames:)` before the next request. `forSwitch`: the request
    /// will be a switch (crossfade), which can start inside a span rendered
    /// from one steady voice only. 0 without a history.
    public func rewindableFrames(forSwitch: Bool) -> Int {
        // Only a whole-mix replay may be rewound again: after a switch the
        // recorded frames still to replay are the old voice alone.
        if (history.replayRemaining > 0 && !replayMix) || deferredSource != nil { return 0 }
        if forSwitch && singleSteadyVoice() == nil { return 0 }
        return history.rewindable(voiceChange: forSwitch)
    }

    /// Takes back the last `frames` rendered frames (the device dropped them
    /// with `snd_pcm_rewind`): the state returns to that frame, the next
    /// request applies from there, and `render` renders them again. Returns
    /// the frames taken back (0 if none could be).
    @discardableResult
    public func rewind(frames: Int) -> Int {
        guard frames > 0, frames <= rewindableFrames(forSwitch: false) else { return 0 }
        let before = history.written
        guard let restored = history.rewind(frames: frames) else { return 0 }
        master = restored
        replayMix = true
        return Int(before - history.written)
    }

    /// True while rewound frames are being rendered again.
    public var isReplaying: Bool { history.replayRemaining > 0 }

    /// The one voice at full crossfade gain, if that is the whole mix.
    private func singleSteadyVoice() -> Int? {
        var found: Int?
        for v in 0..<Self.voiceCount where voices[v].source != nil {
            guard found == nil, voices[v].theta >= 1, voices[v].target >= 1 else { return nil }
            found = v
        }
        return found
    }

    /// Removes and returns one dropped source, or nil. The caller must release
    /// it off the audio thread (e.g. send it to the main thread).
    public func takeRetired() -> SoundSource? {
        retired.take()
    }

    // MARK: - Rendering

    /// Renders `frames` stereo interleaved S16 frames into `out` (2·frames
    /// values), clamped to full scale. Owning thread only; real-time safe.
    @discardableResult
    public func render(into out: UnsafeMutablePointer<Int16>, frames: Int) -> RenderOutcome {
        var outcome = RenderOutcome(isSilent: isSilent, fadeOutCompleted: false, retiredPending: retired.count)
        var done = 0
        while done < frames {
            let n = nextChunkFrames(frames - done)
            let dst = out + 2 * done
            if let (source, gain) = steadySource() {
                // Nothing ramps: one pass from the source's block to S16, no mix buffer.
                history.beginChunk(master: master, voiceSteady: true)
                source.render(into: voiceBuffer, frames: n)
                history.store(voiceBuffer, frames: n)
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
        outcome.retiredPending = retired.count
        return outcome
    }

    /// Like `render(into:frames:)` but writes floats (unclamped). For tests and
    /// offline analysis. Owning thread only; real-time safe.
    @discardableResult
    public func renderFloat(into out: UnsafeMutablePointer<Float>, frames: Int) -> RenderOutcome {
        var outcome = RenderOutcome(isSilent: isSilent, fadeOutCompleted: false, retiredPending: retired.count)
        var done = 0
        while done < frames {
            let n = nextChunkFrames(frames - done)
            let chunk = renderChunk(frames: n)
            if chunk.fadeOutCompleted { outcome.fadeOutCompleted = true }
            (out + 2 * done).update(from: mixBuffer, count: 2 * n)
            done += n
        }
        outcome.isSilent = isSilent
        outcome.retiredPending = retired.count
        return outcome
    }

    /// The steady state, when the output is just `gain` × one source: exactly
    /// one voice, at full crossfade gain, audible, with no transport fade and no
    /// volume ramp in progress. Then `render` skips the mix buffer; the samples
    /// are the same as the general path's (x·1 + 0 = x, then one multiply).
    private func steadySource() -> (SoundSource, Float)? {
        guard master.isSteady, master.fadePosition > 0, history.replayRemaining == 0,
              let v = singleSteadyVoice(), let source = voices[v].source else { return nil }
        return (source, master.steadyGain)
    }

    /// The size of the next chunk (≤ `left`): a replay ends on a chunk
    /// boundary, where a deferred switch then applies.
    private func nextChunkFrames(_ left: Int) -> Int {
        let replay = history.replayRemaining
        if replay == 0 {
            replayMix = false
            replaySlot = -1
            if let source = deferredSource {
                deferredSource = nil
                switchVoices(to: source, frames: deferredFrames, zeroFramesCrossfade: deferredZeroFramesCrossfade)
            }
            return min(maxFrames, left)
        }
        return min(maxFrames, left, replay)
    }

    /// Renders `n ≤ maxFrames` frames into `mixBuffer`.
    private func renderChunk(frames n: Int) -> (isSilent: Bool, fadeOutCompleted: Bool) {
        let samples = 2 * n
        if isSilent {
            // Voices don't advance while silent, and neither does the history:
            // silence is never rewound (the audio thread rewinds only while
            // audible), and a replay that a pause's fade cut short stays
            // pending, so resuming plays the recorded frames the device never
            // played (it gave them back) instead of skipping them.
            mixBuffer.update(repeating: 0, count: samples)
            return (true, false)
        }
        history.beginChunk(master: master, voiceSteady: !replayMix && singleSteadyVoice() != nil)
        if replayMix {
            history.read(into: mixBuffer, frames: n)
        } else {
            // The first voice stores into the mix buffer, later ones add to it.
            var mixed = false
            for v in 0..<Self.voiceCount where voices[v].source != nil {
                mixVoice(v, frames: n, accumulate: mixed)
                mixed = true
            }
            if !mixed { mixBuffer.update(repeating: 0, count: samples) }
        }
        history.store(mixBuffer, frames: n)
        master.apply(to: mixBuffer, frames: n)
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
        if v == replaySlot {
            history.read(into: voiceBuffer, frames: n)  // its source is already past these frames
        } else {
            source.render(into: voiceBuffer, frames: n)
        }
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
            EqualPowerRamp.mix(voiceBuffer, into: mixBuffer, frames: n, &voice)
        }
        voices[v].theta = voice.theta
        voices[v].phase = voice.phase
        if voice.theta <= 0 && voice.target <= 0 {
            retireVoice(v)
        }
    }

    // MARK: - Voices

    private func crossfadeVoices(to source: SoundSource, frames: Int) {
        let step = frames > 0 ? 1 / Float(frames) : 1
        for v in 0..<Self.voiceCount where voices[v].source != nil {
            voices[v].target = 0
            voices[v].step = step
            voices[v].phase = EqualPowerRamp.Phasor(angle: Double(voices[v].theta) * (Double.pi / 2))
            voices[v].turn = EqualPowerRamp.Phasor(angle: -Double(step) * (Double.pi / 2))
        }
        let slot = freeVoiceSlot()
        voices[slot] = Voice(source: source, theta: 0, target: 1, step: step,
                             phase: EqualPowerRamp.Phasor(angle: 0), turn: EqualPowerRamp.Phasor(angle: Double(step) * (Double.pi / 2)))
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
        if v == replaySlot { replaySlot = -1 }
        voices[v] = Voice()
        retired.park(source)
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
