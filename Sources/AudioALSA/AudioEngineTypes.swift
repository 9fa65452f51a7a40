import Ambience

extension AudioEngine {
    /// Resolved audio settings (from the `audio` config section).
    public struct Settings: Sendable, Equatable {
        /// Any ALSA pcm name: `default`, `hw:CARD=sndrpihifiberry`, `file:'/tmp/x.raw',raw`, …
        public var device: String
        /// Output rate in Hz (ALSA resamples when the hardware can't).
        public var sampleRate: Int
        /// Frames per write/period.
        public var periodFrames: Int
        /// Device buffer in frames (latency, and how far ahead of real time the thread runs).
        public var bufferFrames: Int
        /// On an audible change (pause, switch, gain) the queued frames are taken
        /// back (`snd_pcm_rewind`) except this many, which cover the time to
        /// render and write the replacement; 0 disables rewinding.
        public var rewindMarginFrames: Int

        /// Settings with the config defaults (48 kHz, 1024-frame periods, 4096-frame
        /// buffer, a rewind margin of 256 frames = 5.3 ms: see README "Decisions").
        public init(device: String = "default", sampleRate: Int = 48_000, periodFrames: Int = 1024, bufferFrames: Int = 4096,
                    rewindMarginFrames: Int = Self.defaultRewindMarginFrames) {
            self.device = device
            self.sampleRate = sampleRate
            self.periodFrames = periodFrames
            self.bufferFrames = bufferFrames
            self.rewindMarginFrames = rewindMarginFrames
        }

        /// The rewind margin used unless a test asks otherwise.
        public static let defaultRewindMarginFrames = 256
    }

    /// A command from the main thread to the audio thread (see `send(_:)`).
    public enum Request: Sendable {
        /// Start or resume with a fade-in; a source switches to it (crossfading if
        /// audible), nil resumes the current one (with no source loaded, silence
        /// is played). Answered by `playing(ticket)` after the first write that
        /// carries it (delayed while the device is unavailable).
        case play(SoundSource?, fadeMs: Int, ticket: UInt64)
        /// Fade out and stop feeding the device. Answered by `paused(ticket)` once
        /// the fade-out has completed (a pause overtaken by a later play is not answered).
        case pause(fadeMs: Int, ticket: UInt64)
        /// Switch sound: an equal-power crossfade when playing (answered by
        /// `playing(ticket)`), a plain replacement when paused (answered by `paused(ticket)`).
        case switchTo(SoundSource, crossfadeMs: Int, ticket: UInt64)
        /// Ramp the software volume gain (linear; see `VolumeCurve`) over `rampMs`.
        case setGain(Float, rampMs: Int)
    }

    /// News from the audio thread, read on the main thread with `drainReports()`.
    public enum Report: Sendable {
        /// The request with this ticket took effect and its audio is leaving for the device.
        case playing(ticket: UInt64)
        /// The pause (or paused switch) with this ticket completed: output is silent.
        case paused(ticket: UInt64)
        /// The device opened (again) after being unavailable and accepts audio.
        case deviceAvailable
        /// The device failed and is closed; reopening is retried (0.5 s … 5 s) while playback is intended.
        case deviceUnavailable(reason: String)
        /// Total underruns recovered so far (sent when the count changes).
        case underruns(total: Int)
        /// Whether the audio thread got SCHED_FIFO real-time priority.
        case realtimeScheduling(Bool)
        /// A source the audio thread no longer uses; release it here, on the main thread.
        case retired(SoundSource)
        /// The device can't take back queued frames (sent once per engine): changes
        /// are heard after the queued buffer, as without rewinding.
        case rewindUnavailable(reason: String)
        /// Rewinds so far, and the most frames the device played between a rewind
        /// and the end of the write that replaced them, by its pointer and by the
        /// clock (both must stay below the margin; at most one report a second).
        case rewinds(total: Int, worstRefillFrames: Int, worstRefillMicroseconds: Int)
    }
}
