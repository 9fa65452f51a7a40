// SPDX-License-Identifier: Apache-2.0
/// Renders sounds without a device, exactly as the player does (same renderer,
/// same gain and conversion): for the `render` command and for benchmarks.
/// Runs on the calling thread.
public enum OfflineRender {
    /// Renders `frames` frames of `source` at `gain` through an
    /// `AmbienceRenderer`, fading in over `fadeInFrames`, and passes each S16
    /// stereo interleaved chunk (up to `chunkFrames` frames) to `sink`.
    public static func render(
        source: SoundSource, sampleRate: Int, frames: Int, gain: Float = 1,
        fadeInFrames: Int = 0, chunkFrames: Int = 4096,
        sink: (UnsafeBufferPointer<Int16>) throws -> Void
    ) rethrows {
        let chunk = max(chunkFrames, 16)
        let renderer = AmbienceRenderer(sampleRate: sampleRate, maxFrames: chunk)
        renderer.setGain(gain, rampFrames: 0)
        renderer.play(source, fadeFrames: fadeInFrames)
        let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * chunk)
        defer { buffer.deallocate() }
        var done = 0
        while done < frames {
            let n = min(chunk, frames - done)
            renderer.render(into: buffer, frames: n)
            try sink(UnsafeBufferPointer(start: buffer, count: 2 * n))
            done += n
        }
    }

    /// Benchmark workload: renders `seconds` of pink noise at `sampleRate`
    /// through the full renderer path into S16, in 1024-frame periods like the
    /// player. Returns the frame count and a checksum (sum of |samples|) so the
    /// work cannot be optimised away. Time it to get a real-time factor:
    /// RTF = seconds / wall-clock seconds.
    public static func renderPinkForBenchmark(seconds: Double, sampleRate: Int = 48_000) -> (frames: Int, checksum: Int64) {
        let frames = Int(seconds * Double(sampleRate))
        var checksum: Int64 = 0
        render(source: PinkNoise(), sampleRate: sampleRate, frames: frames, chunkFrames: 1024) { chunk in
            for s in chunk { checksum &+= Int64(s.magnitude) }
        }
        return (frames, checksum)
    }
}
