// SPDX-License-Identifier: Apache-2.0
import Ambience
#if canImport(Glibc)
import Glibc
#endif

/// Turns a sound file into an endless stereo stream at the output rate: the
/// file looped seamlessly, resampled with libsoxr when its rate differs.
///
/// The loop: the first pass plays the file from its start; every later pass
/// starts at frame `X` (the crossfade length), because the last `X` frames
/// of each pass are an equal-power crossfade of the file's tail into its head
/// (tail·cos, head·sin), so the join has no gap, click or level jump for
/// uncorrelated material. Looping happens at the file rate, before the
/// resampler, so the resampler sees one continuous signal; decoding, the
/// crossfade and resampling run in the file's own channels (a mono file is
/// resampled once and up-mixed only when copied out).
///
/// Long files stream: the head (`X` frames, at most a second) is kept in
/// memory as the first pass decodes it, everything else is read from disk as needed. A short loop (one
/// period at most `maxCachedSeconds` after resampling, within the shared
/// `LoopMemoryBudget`) is also captured into a `LoopCache` while its first
/// pass plays; from then on the stream is that period repeated, so looping
/// costs a copy, and the file is closed. The period is exact: `X` is
/// lengthened by at most one resampling period (147 frames at 44.1 kHz →
/// 48 kHz) so the loop's length converts to a whole number of output frames,
/// and capture starts `captureMargin` input frames after the head, where the
/// resampler's output no longer depends on the first pass's unfaded head.
///
/// Used by one thread at a time and never the audio thread (it reads the disk).
final class LoopingDecoder {
    /// The decoded file.
    let reader: SoundFileReader
    /// Output rate in Hz.
    let outputRate: Int
    /// 1 or 2: the file's channels, kept until the copy out.
    let channels: Int
    /// Frames (at the file rate) of the tail→head crossfade.
    let crossfadeFrames: Int
    /// The loop's period once captured (nil: too long, over budget, or a rate
    /// pair whose period is not a whole number of output frames).
    let cache: LoopCache?
    /// Input frames after the head before capture starts (longer than any
    /// libsoxr filter's reach at these ratios).
    static let captureMargin = 8_192
    /// cos and sin of the crossfade's per-frame angle step, π / (2 · crossfadeFrames).
    private let stepCos: Double, stepSin: Double
    /// Short reads (decoding errors) so far; their frames are played as silence.
    private(set) var readErrors = 0
    /// Total file frames decoded (for tests and measurements).
    private(set) var framesDecoded = 0
    /// Output frames delivered by `produce` so far.
    private(set) var framesDelivered = 0

    private let resampler: StreamResampler?
    private var head: UnsafeMutablePointer<Float>?
    private let chunkFrames = 2048
    private let fileChunk: UnsafeMutablePointer<Float>
    private let tailChunk: UnsafeMutablePointer<Float>
    private let resampled: UnsafeMutablePointer<Float>
    private let resampledCapacity: Int
    private var resampledStart = 0
    private var resampledEnd = 0
    /// Output frames produced into `resampled` so far.
    private var framesProduced = 0
    /// Position in the file of the next frame to read.
    private var position = 0
    /// Next cache frame to copy, once the stream is served from the cache.
    private var cacheIndex: Int?

    /// Opens `path` for looping at `outputRate`. With a `budget`, a loop whose
    /// period is at most `maxCachedSeconds` long is cached. Throws a `SoundFileError`.
    init(path: String, outputRate: Int, maxCrossfadeSeconds: Double = 1, maxCachedSeconds: Double = 30,
         budget: LoopMemoryBudget? = nil) throws(SoundFileError) {
        let reader = try SoundFileReader(path: path)
        self.reader = reader
        self.outputRate = outputRate
        channels = reader.channels
        let inRate = reader.sampleRate, frames = reader.frames
        var x = max(1, min(Int(maxCrossfadeSeconds * Double(inRate)), frames / 4))
        // One loop period (frames − X input frames) is a whole number of output
        // frames when it is a multiple of q = inRate / gcd(inRate, outRate).
        let q = inRate / Self.gcd(inRate, outputRate)
        let misfit = (frames - x) % q
        if misfit > 0 && x + misfit <= frames / 2 { x += misfit }
        crossfadeFrames = x
        stepCos = cos(Double.pi / 2 / Double(x))
        stepSin = sin(Double.pi / 2 / Double(x))
        resampler = inRate == outputRate ? nil
            : try StreamResampler(from: inRate, to: outputRate, channels: channels, path: path)
        let ratio = Double(outputRate) / Double(inRate)
        if (frames - x) % q == 0, let budget {
            let periodOut = (frames - x) / q * (outputRate / Self.gcd(inRate, outputRate))
            let start = resampler == nil ? x : Int((Double(x + Self.captureMargin) * ratio).rounded(.up))
            cache = Double(periodOut) <= maxCachedSeconds * Double(outputRate)
                ? LoopCache(frames: periodOut, channels: channels, startFrame: start, budget: budget) : nil
        } else {
            cache = nil
        }
        // The head is kept as the first pass decodes it (it is needed only at
        // that pass's end, and that pass writes all of it first): opening
        // decodes and touches nothing, so a mix's layers are quick to make on
        // the loop thread.
        head = UnsafeMutablePointer<Float>.allocate(capacity: channels * x)
        fileChunk = .allocate(capacity: channels * chunkFrames)
        tailChunk = .allocate(capacity: channels * chunkFrames)
        resampledCapacity = Int((Double(chunkFrames) * ratio).rounded(.up)) + 64
        resampled = .allocate(capacity: channels * resampledCapacity)
    }

    deinit {
        head?.deallocate()
        fileChunk.deallocate()
        tailChunk.deallocate()
        resampled.deallocate()
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    /// Decoded frames waiting in the decoder (already resampled, not yet delivered).
    var bufferedFrames: Int { resampledEnd - resampledStart }

    /// The cache frame that comes next, once the cache is complete and
    /// nothing decoded is waiting: from here on the stream is the cache.
    var nextCacheFrame: Int? {
        guard let cache, cache.isComplete, bufferedFrames == 0 else { return nil }
        return cacheIndex ?? (framesDelivered - cache.startFrame) % cache.frames
    }

    /// Writes exactly `frames` stereo interleaved frames of the endless stream,
    /// multiplied by `gain`, to `out` (one pass: the copy does the scaling and
    /// the up-mix of a mono file).
    func produce(into out: UnsafeMutablePointer<Float>, frames: Int, gain: Float = 1) {
        var done = 0
        while done < frames {
            if let cache, let index = cacheIndex {
                cacheIndex = cache.copy(into: out + 2 * done, frames: frames - done, from: index, gain: gain)
                framesDelivered += frames - done
                return
            }
            if resampledStart == resampledEnd {
                if let next = nextCacheFrame {
                    cacheIndex = next
                    releaseFile()
                    continue
                }
                refill()
            }
            let n = min(frames - done, resampledEnd - resampledStart)
            let src = UnsafePointer(resampled + channels * resampledStart), dst = out + 2 * done
            if channels == 2 {
                SampleConversion.scale(src, by: gain, into: dst, count: 2 * n)
            } else {
                for i in 0..<n {
                    let v = src[i] * gain
                    dst[2 * i] = v
                    dst[2 * i + 1] = v
                }
            }
            resampledStart += n
            framesDelivered += n
            done += n
        }
    }

    /// Frees what only decoding needs (the head, libsndfile's decoder state)
    /// once the stream is served from the cache.
    func releaseFile() {
        head?.deallocate()
        head = nil
        reader.close()
    }

    /// Decodes the next file-rate chunk of the loop and resamples it into
    /// `resampled` (without a resampler, decodes straight into it); captures
    /// what falls in the cached period.
    private func refill() {
        resampledStart = 0
        if let resampler {
            let n = nextLoopChunk(into: fileChunk)
            var consumed = 0
            resampledEnd = 0
            while consumed < n && resampledEnd < resampledCapacity {
                let r = resampler.process(fileChunk + channels * consumed, inputFrames: n - consumed,
                                          into: resampled + channels * resampledEnd,
                                          outputCapacity: resampledCapacity - resampledEnd)
                consumed += r.consumed
                resampledEnd += r.produced
                if r.consumed == 0 && r.produced == 0 { break }
            }
        } else {
            resampledEnd = nextLoopChunk(into: resampled)
        }
        if let cache, !cache.isComplete {
            cache.capture(resampled, frames: resampledEnd, firstFrame: framesProduced)
        }
        framesProduced += resampledEnd
    }

    /// Fills `chunk` (room for `chunkFrames`) with the next frames of the loop
    /// (file rate, native channels); returns how many.
    private func nextLoopChunk(into chunk: UnsafeMutablePointer<Float>) -> Int {
        let fadeStart = reader.frames - crossfadeFrames
        if position < fadeStart {
            let n = min(chunkFrames, fadeStart - position)
            read(into: chunk, count: n)
            if position < crossfadeFrames, let head {
                // The first pass (only it starts before X): keep the head.
                let kept = min(n, crossfadeFrames - position)
                (head + channels * position).initialize(from: chunk, count: channels * kept)
            }
            position += n
            return n
        }
        guard let head else { return 0 }
        // In the crossfade: tail frames [fadeStart, frames) mixed with head [0, X).
        let offset = position - fadeStart
        let n = min(chunkFrames, crossfadeFrames - offset)
        read(into: tailChunk, count: n)
        // Gains cos t, sin t at t = (frame + 0.5) / X · π/2: exact at the chunk's
        // first frame, then a phasor rotated by π/(2X) per frame (two trig calls
        // per chunk instead of two per frame; the phasor's rounding drift over
        // a chunk is of the order of 1e-13, far below 16-bit resolution).
        let x = Double(crossfadeFrames)
        let t0 = (Double(offset) + 0.5) / x * (Double.pi / 2)
        var c = cos(t0), s = sin(t0)
        let tail = UnsafePointer(tailChunk), headFrames = UnsafePointer(head + channels * offset)
        for i in 0..<n {
            let gOut = Float(c), gIn = Float(s)
            for k in (channels * i)..<(channels * i + channels) {
                chunk[k] = tail[k] * gOut + headFrames[k] * gIn
            }
            (c, s) = (c * stepCos - s * stepSin, s * stepCos + c * stepSin)
        }
        position += n
        if position >= reader.frames {
            // The head has just played (inside the crossfade): continue after it.
            position = crossfadeFrames
            do { try reader.seek(to: crossfadeFrames) } catch { readErrors += 1 }
        }
        return n
    }

    private func read(into buffer: UnsafeMutablePointer<Float>, count: Int) {
        let got = reader.readNative(into: buffer, count: count)
        framesDecoded += got
        if got < count {
            readErrors += 1
            (buffer + channels * got).update(repeating: 0, count: channels * (count - got))
        }
    }
}
