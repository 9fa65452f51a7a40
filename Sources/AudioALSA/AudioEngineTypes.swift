// SPDX-License-Identifier: Apache-2.0
import Ambience
import SpeakerPorts

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

        /// Settings as given; the defaults are the config's (`AudioSection`), applied where the config is read.
        public init(device: String, sampleRate: Int, periodFrames: Int, bufferFrames: Int, rewindMarginFrames: Int) {
            self.device = device
            self.sampleRate = sampleRate
            self.periodFrames = periodFrames
            self.bufferFrames = bufferFrames
            self.rewindMarginFrames = rewindMarginFrames
        }
    }

    /// A command from the main thread to the audio thread (see `send(_:)`): the audio port's request.
    public typealias Request = AudioEngineRequest

    /// News from the audio thread, read on the main thread with `drainReports()`: the audio port's report.
    public typealias Report = AudioEngineReport
}
