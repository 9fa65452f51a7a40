// SPDX-License-Identifier: Apache-2.0
import Ambience

/// How much faster than real time the player's render path runs on this CPU:
/// seconds of 48 kHz stereo audio produced per second of wall time, through
/// `OfflineRender` (the same renderer, gain and S16 conversion as the audio
/// thread) in 1024-frame periods like the player. Runs on the calling thread.
struct RenderThroughput {
    /// The built-in sounds to measure (`render_realtime_factor_<id>`).
    var soundIDs = ["pink", "brown", "rain", "surf"]
    /// Seconds of audio rendered per sound (after a one-second warm-up).
    var seconds = 60.0
    /// Output rate.
    var sampleRate = 48_000
    /// Timed runs per sound; the median is reported.
    var repeats = 3

    /// Reports `render_realtime_factor_<id>` (unit `x`) for every sound.
    func run(report: BenchReport) {
        for id in soundIDs {
            guard let sound = BuiltInSounds.sound(id: id) else {
                report.note("render: no built-in sound \"\(id)\"; skipped")
                continue
            }
            _ = render(sound, frames: sampleRate)  // warm-up: caches, page faults, lazy tables
            let frames = Int(seconds * Double(sampleRate))
            let timed = RepeatedTiming.median(repeats: repeats) { render(sound, frames: frames) }
            report.note("render \(id): \(seconds) s of audio in \(timed.seconds) s, median of \(repeats) (checksum \(timed.first))")
            report.metric("render_realtime_factor_\(id)", seconds / timed.seconds, unit: "x")
        }
    }

    /// Renders `frames` frames of a fresh source at unity gain; returns the
    /// sum of |samples| so the work cannot be optimised away (that sum is
    /// inside the timed region; it is a small fraction of the render cost).
    private func render(_ sound: BuiltInSound, frames: Int) -> Int64 {
        var checksum: Int64 = 0
        OfflineRender.render(source: sound.makeSource(sampleRate: sampleRate, seed: 42), sampleRate: sampleRate,
                             frames: frames, gain: 1, fadeInFrames: 0, chunkFrames: 1024) { chunk in
            for sample in chunk { checksum &+= Int64(sample.magnitude) }
        }
        return checksum
    }
}
