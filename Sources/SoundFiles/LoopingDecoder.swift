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

    /// Writes exactly `frames` stereo interleaved frames of the endless stream to `out`.
    func produce(into out: UnsafeMutablePointer<Float>, frames: Int) {
        var done = 0
        while done < frames {
            if resampledStart == resampledEnd { refill() }
            let n = min(frames - done, resampledEnd - resampledStart)
            (out + 2 * done).update(from: resampled + 2 * resampledStart, count: 2 * n)
            resampledStart += n
            done += n
        }
    }

    /// Decodes the next file-rate chunk of the loop and resamples it into `resampled`.
    private func refill() {
        let n = nextLoopChunk()
        resampledStart = 0
        guard let resampler else {
            resampled.update(from: fileChunk, count: 2 * n)
            resampledEnd = n
            return
        }
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

    /// Fills `fileChunk` with the next frames of the loop (file rate); returns how many.
    private func nextLoopChunk() -> Int {
        let fadeStart = reader.frames - crossfadeFrames
        if position < fadeStart {
            let n = min(chunkFrames, fadeStart - position)
            read(into: fileChunk, count: n)
            position += n
            return n
        }
        // In the crossfade: tail frames [fadeStart, frames) mixed with head [0, X).
        let offset = position - fadeStart
        let n = min(chunkFrames, crossfadeFrames - offset)
        read(into: tailChunk, count: n)
        let x = Double(crossfadeFrames)
        for i in 0..<n {
            let t = (Double(offset + i) + 0.5) / x * (Double.pi / 2)
            let gOut = Float(cos(t)), gIn = Float(sin(t))
            let h = 2 * (offset + i)
            fileChunk[2 * i] = tailChunk[2 * i] * gOut + head[h] * gIn
            fileChunk[2 * i + 1] = tailChunk[2 * i + 1] * gOut + head[h + 1] * gIn
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
