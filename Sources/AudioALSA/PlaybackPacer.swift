// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem

/// Keeps the audio thread from running more than about a buffer ahead of the
/// monotonic clock. Pcms with a clock (real cards) pace the thread themselves
/// through blocking writes and report a non-zero `snd_pcm_delay`; the pacer then
/// follows the device. File and null pcms never block (delay 0), so the pacer
/// is what holds them to real time. Audio thread only; no allocation.
struct PlaybackPacer {
    let sampleRate: Double
    let aheadLimit: Int64
    private var epochNanos: Int64 = 0
    private var written: Int64 = 0

    init(sampleRate: Int, aheadLimitFrames: Int) {
        self.sampleRate = Double(sampleRate)
        aheadLimit = Int64(aheadLimitFrames)
    }

    /// Nanoseconds on CLOCK_MONOTONIC (SpeakerSystem's one ``MonotonicClock``).
    static func now() -> Int64 {
        Int64(MonotonicClock.now())
    }

    /// Starts counting from `now` with nothing written (after prepare).
    mutating func reset(now: Int64) {
        epochNanos = now
        written = 0
    }

    /// Records `frames` written; `deviceDelay` is `snd_pcm_delay` after the write.
    mutating func didWrite(frames: Int, deviceDelay: Int, now: Int64) {
        written += Int64(frames)
        if deviceDelay > 0 {
            // The device has a clock: what it consumed is written − delay.
            setEpoch(consumed: written - Int64(deviceDelay), now: now)
        } else if ahead(now: now) < -aheadLimit {
            // Fell far behind (a stall): don't burst to catch up.
            setEpoch(consumed: written, now: now)
        }
    }

    /// Records `frames` taken back from the device (`snd_pcm_rewind`).
    mutating func didRewind(frames: Int) {
        written -= Int64(frames)
    }

    /// How long to wait before the next write (0: write now).
    func waitNanos(now: Int64) -> Int64 {
        let excess = ahead(now: now) - aheadLimit
        return excess > 0 ? Int64(Double(excess) / sampleRate * 1e9) : 0
    }

    private func ahead(now: Int64) -> Int64 {
        written - Int64(Double(now - epochNanos) * sampleRate / 1e9)
    }

    private mutating func setEpoch(consumed: Int64, now: Int64) {
        epochNanos = now - Int64(Double(consumed) / sampleRate * 1e9)
    }
}
