// SPDX-License-Identifier: Apache-2.0
import Ambience

/// A sound file as a `SoundSource`: looped seamlessly, at the output rate,
/// 6 dB below the file's own level (headroom for crossfades and full volume).
///
/// Streamed (with a `FileStreamer`): decoded ahead into a ring of about a
/// second by the read-ahead thread; `render` only copies from the ring, so it
/// is real-time safe. Direct (no streamer, for `render` and tests): `render`
/// decodes on the calling thread. Both produce the same samples, because the
/// ring only delays the decoder's stream. A short loop is served from its
/// `LoopCache` once its first pass has been decoded (a copy per period, no
/// read-ahead); the cache counts against `budget` (`audio.loopMemoryKB`).
/// Created and released on the main thread; rendered by one thread (the audio
/// thread once handed over).
public final class FileSound: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: rendered by one thread at a time (see SoundSource);
    // the stream's ring and counters are atomics; the decoder is only used by
    // the filling side (or by `render` in direct mode, where nothing else runs).
    /// −6 dB applied to every file: a full-scale file played at level 1.0 and
    /// crossfaded with another one stays below clipping far more often.
    public static let headroom: Float = 0.5

    /// The file's path.
    public let path: String
    private let stream: FileStream?
    private let direct: LoopingDecoder?
    private let streamer: FileStreamer?
    /// The cache the audio thread copies from after the hand-over, and its next frame.
    private var cache: LoopCache?
    private var cacheFrame = 0

    /// Opens `path` for playback at `sampleRate`. With a running `streamer`,
    /// primes a quarter of the ring (0.25 s, decoded here on the calling
    /// thread, so a mix of several file layers starts soon) and registers it
    /// for read-ahead, which fills the rest at once. A short loop is cached within
    /// `budget` (default: the streamer's, else a fresh one of
    /// `LoopMemoryBudget.defaultKB`). Throws a `SoundFileError` naming the
    /// file when it can't be decoded any more (changed since the catalog scan).
    public init(path: String, sampleRate: Int, streamer: FileStreamer?,
                budget: LoopMemoryBudget? = nil) throws(SoundFileError) {
        self.path = path
        let budget = budget ?? streamer?.loopBudget ?? LoopMemoryBudget(bytes: LoopMemoryBudget.defaultKB * 1024)
        let decoder = try LoopingDecoder(path: path, outputRate: sampleRate, budget: budget)
        if let streamer, streamer.isRunning {
            let stream = FileStream(decoder: decoder, ringFrames: sampleRate)
            stream.fill(atMost: sampleRate / 4)
            streamer.add(stream)
            self.stream = stream
            self.streamer = streamer
            direct = nil
        } else {
            stream = nil
            self.streamer = nil
            direct = decoder
        }
    }

    deinit {
        if let stream { streamer?.remove(stream) }
    }

    /// The read-ahead stream (nil in direct mode), for tests.
    var streamForTests: FileStream? { stream }

    /// True once the sound is played from its cached loop (streamed mode, for tests).
    var playsFromCacheForTests: Bool { cache != nil }

    /// Frames played as silence because read-ahead fell behind (0 in direct mode).
    public var starvedFrames: Int { stream?.starvedFrames.load(ordering: .relaxed) ?? 0 }

    /// Copies the next frames from the ring (streamed) or decodes them
    /// (direct), scaled by `headroom` in the same pass. Streamed: real-time safe; when the ring
    /// runs low it wakes the read-ahead thread (one eventfd write).
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        if let direct {
            direct.produce(into: buffer, frames: frames, gain: Self.headroom)
        } else if let cache {
            cacheFrame = cache.copy(into: buffer, frames: frames, from: cacheFrame, gain: Self.headroom)
        } else if let stream {
            var got = stream.ring.read(into: buffer, frames: frames, gain: Self.headroom)
            if got < frames, stream.cacheReady.load(ordering: .acquiring), let ready = stream.cache {
                // The filler has stopped; its last frames may have landed after the
                // read above, so drain the ring again before the cache continues it.
                got += stream.ring.read(into: buffer + 2 * got, frames: frames - got, gain: Self.headroom)
                if got < frames {
                    cache = ready
                    cacheFrame = ready.copy(into: buffer + 2 * got, frames: frames - got,
                                            from: stream.cacheFrame.load(ordering: .relaxed), gain: Self.headroom)
                    stream.ringDrained.store(true, ordering: .releasing)
                    streamer?.requestFill()  // the read-ahead thread hands the ring's memory back
                }
                return
            }
            if got < frames {
                (buffer + 2 * got).update(repeating: 0, count: 2 * (frames - got))
                stream.starvedFrames.add(frames - got, ordering: .relaxed)
            }
            if stream.ring.available < stream.ring.capacity / 2,
               !stream.needsFill.exchange(true, ordering: .relaxed) {
                streamer?.requestFill()
            }
        }
    }
}
