// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// The decoder and read-ahead ring behind one streamed `FileSound`.
///
/// `fill()` runs on the read-ahead thread (or on the creating thread before
/// the stream is handed over); `ring.read` runs on the audio thread. The
/// decoder (and so the disk) is only ever touched by the filling side.
///
/// A short loop hands over to its `LoopCache`: once the decoder has captured
/// the loop's period, `fill()` stops writing the ring, publishes the cache
/// frame that follows the last one written (`cacheFrame`, then `cacheReady`
/// with a release store) and drops the decoder; the audio thread drains the
/// ring and then copies from the cache itself, with no read-ahead at all.
final class FileStream: @unchecked Sendable {
    // @unchecked Sendable: `decoder` is used by one filling thread at a time
    // (the creator primes it before registering it with the streamer, then only
    // the streamer thread fills it); `ring` and the atomics are thread-safe;
    // `cache` is immutable once `cacheReady` is published.
    let ring: SampleRing
    /// Set by the audio thread when the ring fell below half; cleared by the filler.
    let needsFill = Atomic<Bool>(false)
    /// Frames the audio thread had to play as silence because the ring ran dry.
    let starvedFrames = Atomic<Int>(0)
    /// The loop's period, when it is cached (complete once `cacheReady`).
    let cache: LoopCache?
    /// True once the ring holds the last decoded frames and the cache continues them.
    let cacheReady = Atomic<Bool>(false)
    /// The cache frame after the ring's last frame (valid once `cacheReady`).
    let cacheFrame = Atomic<Int>(0)
    /// Set by the audio thread once it plays from the cache: the ring is done with.
    let ringDrained = Atomic<Bool>(false)
    /// Filling side: the ring's memory has been handed back.
    private var ringDiscarded = false
    private let discarded = Atomic<Bool>(false)

    /// True once the ring's memory has been handed back (any thread, for tests).
    var ringDiscardedForTests: Bool { discarded.load(ordering: .acquiring) }
    private var decoder: LoopingDecoder?
    private var decodedBeforeHandover = 0
    private var errorsBeforeHandover = 0

    init(decoder: LoopingDecoder, ringFrames: Int) {
        self.decoder = decoder
        cache = decoder.cache
        ring = SampleRing(minimumFrames: ringFrames)
    }

    /// Decodes until the ring is full (or `atMost` frames are written), or
    /// hands over to the cache. Filling thread only; reads the disk.
    func fill(atMost: Int = .max) {
        var left = atMost
        needsFill.store(false, ordering: .relaxed)
        guard let decoder else { return }
        while true {
            if let next = decoder.nextCacheFrame {
                cacheFrame.store(next, ordering: .relaxed)
                cacheReady.store(true, ordering: .releasing)
                decodedBeforeHandover = decoder.framesDecoded
                errorsBeforeHandover = decoder.readErrors
                decoder.releaseFile()
                self.decoder = nil
                return
            }
            let free = min(ring.free, left)
            guard free > 0 else { return }
            // Once the period is captured, write only what is already decoded.
            let n = decoder.cache?.isComplete == true ? min(free, decoder.bufferedFrames) : free
            ring.write(frames: n) { region, frames in decoder.produce(into: region, frames: frames) }
            left -= n
        }
    }

    /// Hands the ring's memory back once the audio thread has left it for the
    /// cache (filling thread).
    func discardRingIfDrained() {
        guard !ringDiscarded, ringDrained.load(ordering: .acquiring) else { return }
        ring.discardStorage()
        ringDiscarded = true
        discarded.store(true, ordering: .releasing)
    }

    /// File frames decoded so far (filling thread; tests read it while idle).
    var framesDecodedForTests: Int { decoder?.framesDecoded ?? decodedBeforeHandover }

    /// Short reads so far (filling thread).
    var readErrors: Int { decoder?.readErrors ?? errorsBeforeHandover }
}
