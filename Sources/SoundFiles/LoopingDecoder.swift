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
/// uncorrelated material. The head is kept in memory (`X` frames, at most a
/// second); everything else is read from disk as it is needed, so memory does
/// not grow with the file. Looping happens at the file rate, before the
/// resampler, so the resampler sees one continuous signal.
///
/// Used by one thread at a time and never the audio thread (it reads the disk).
final class LoopingDecoder {
    /// The decoded file.
    let reader: SoundFileReader
    /// Output rate in Hz.
    let outputRate: Int
    /// Frames (at the file rate) of the tail→head crossfade.
    let crossfadeFrames: Int
    /// cos and sin of the crossfade's per-frame angle step, π / (2 · crossfadeFrames).
    private let stepCos: Double, stepSin: Double
    /// Short reads (decoding errors) so far; their frames are played as silence.
    private(set) var readErrors = 0
    /// Total file frames decoded (for tests and measurements).
    private(set) var framesDecoded = 0

    private let resampler: StreamResampler?
    private let head: UnsafeMutablePointer<Float>
    private let chunkFrames = 2048
    private let fileChunk: UnsafeMutablePointer<Float>
    private let tailChunk: UnsafeMutablePointer<Float>
    private let resampled: UnsafeMutablePointer<Float>
    private let resampledCapacity: Int
    private var resampledStart = 0
    private var resampledEnd = 0
    /// Position in the file of the next frame to read.
    private var position = 0

    /// Opens `path` for looping at `outputRate`. Throws a `SoundFileError`.
    init(path: String, outputRate: Int, maxCrossfadeSeconds: Double = 1) throws(SoundFileError) {
        let reader = try SoundFileReader(path: path)
        self.reader = reader
        self.outputRate = outputRate
        crossfadeFrames = max(1, min(Int(maxCrossfadeSeconds * Double(reader.sampleRate)), reader.frames / 4))
        stepCos = cos(Double.pi / 2 / Double(crossfadeFrames))
        stepSin = sin(Double.pi / 2 / Double(crossfadeFrames))
        resampler = reader.sampleRate == outputRate ? nil
            : try StreamResampler(from: reader.sampleRate, to: outputRate, path: path)
        head = .allocate(capacity: 2 * crossfadeFrames)
        head.initialize(repeating: 0, count: 2 * crossfadeFrames)
        fileChunk = .allocate(capacity: 2 * chunkFrames)
        tailChunk = .allocate(capacity: 2 * chunkFrames)
        let ratio = Double(outputRate) / Double(reader.sampleRate)
        resampledCapacity = Int((Double(chunkFrames) * ratio).rounded(.up)) + 64
        resampled = .allocate(capacity: 2 * resampledCapacity)
        let got = reader.readStereo(into: head, count: crossfadeFrames)
        if got < crossfadeFrames {
            throw SoundFileError(path: path, reason: "decoding failed after \(got) frames: \(reader.lastError)")
        }
        try reader.seek(to: 0)
    }

    deinit {
        head.deallocate()
        fileChunk.deallocate()
        tailChunk.deallocate()
        resampled.deallocate()
    }

    /// Writes exactly `frames` stereo interleaved frames of the endless stream,
    /// multiplied by `gain`, to `out` (one pass: the copy does the scaling).
    func produce(into out: UnsafeMutablePointer<Float>, frames: Int, gain: Float = 1) {
        var done = 0
        while done < frames {
            if resampledStart == resampledEnd { refill() }
            let n = min(frames - done, resampledEnd - resampledStart)
            SampleConversion.scale(resampled + 2 * resampledStart, by: gain, into: out + 2 * done, count: 2 * n)
            resampledStart += n
            done += n
        }
    }

    /// Decodes the next file-rate chunk of the loop and resamples it into
    /// `resampled` (without a resampler, decodes straight into it).
    private func refill() {
        resampledStart = 0
        guard let resampler else {
            resampledEnd = nextLoopChunk(into: resampled)
            return
        }
        let n = nextLoopChunk(into: fileChunk)
        var consumed = 0
        resampledEnd = 0
        while consumed < n && resampledEnd < resampledCapacity {
            let r = resampler.process(fileChunk + 2 * consumed, inputFrames: n - consumed,
                                      into: resampled + 2 * resampledEnd, outputCapacity: resampledCapacity - resampledEnd)
            consumed += r.consumed
            resampledEnd += r.produced
            if r.consumed == 0 && r.produced == 0 { break }
        }
    }

    /// Fills `chunk` (room for `chunkFrames`) with the next frames of the loop
    /// (file rate); returns how many.
    private func nextLoopChunk(into chunk: UnsafeMutablePointer<Float>) -> Int {
        let fadeStart = reader.frames - crossfadeFrames
        if position < fadeStart {
            let n = min(chunkFrames, fadeStart - position)
            read(into: chunk, count: n)
            position += n
            return n
        }
        // In the crossfade: tail frames [fadeStart, frames) mixed with head [0, X).
        let offset = position - fadeStart
        let n = min(chunkFrames, crossfadeFrames - offset)
        read(into: tailChunk, count: n)
        // Gains cos t, sin t at t = (frame + 0.5) / X · π/2: exact at the chunk's
        // first frame, then a phasor rotated by π/(2X) per frame (two trig calls
        // per chunk instead of two per frame; drift over a chunk is ~1e-13).
        let x = Double(crossfadeFrames)
        let t0 = (Double(offset) + 0.5) / x * (Double.pi / 2)
        var c = cos(t0), s = sin(t0)
        let tail = UnsafePointer(tailChunk), headFrames = UnsafePointer(head + 2 * offset)
        for i in 0..<n {
            let gOut = Float(c), gIn = Float(s)
            chunk[2 * i] = tail[2 * i] * gOut + headFrames[2 * i] * gIn
            chunk[2 * i + 1] = tail[2 * i + 1] * gOut + headFrames[2 * i + 1] * gIn
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
        let got = reader.readStereo(into: buffer, count: count)
        framesDecoded += got
        if got < count {
            readErrors += 1
            (buffer + 2 * got).update(repeating: 0, count: 2 * (count - got))
        }
    }
}
