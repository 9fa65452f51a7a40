import Synchronization

/// The decoder and read-ahead ring behind one streamed `FileSound`.
///
/// `fill()` runs on the read-ahead thread (or on the creating thread before
/// the stream is handed over); `ring.read` runs on the audio thread. The
/// decoder (and so the disk) is only ever touched by the filling side.
final class FileStream: @unchecked Sendable {
    // @unchecked Sendable: `decoder` is used by one filling thread at a time
    // (the creator primes it before registering it with the streamer, then only
    // the streamer thread fills it); `ring` and the atomics are thread-safe.
    let ring: SampleRing
    /// Set by the audio thread when the ring fell below half; cleared by the filler.
    let needsFill = Atomic<Bool>(false)
    /// Frames the audio thread had to play as silence because the ring ran dry.
    let starvedFrames = Atomic<Int>(0)
    private let decoder: LoopingDecoder

    init(decoder: LoopingDecoder, ringFrames: Int) {
        self.decoder = decoder
        ring = SampleRing(minimumFrames: ringFrames)
    }

    /// Decodes until the ring is full. Filling thread only; reads the disk.
    func fill() {
        needsFill.store(false, ordering: .relaxed)
        while ring.free > 0 {
            ring.write(frames: ring.free) { region, frames in decoder.produce(into: region, frames: frames) }
        }
    }

    /// File frames decoded so far (filling thread; tests read it while idle).
    var framesDecodedForTests: Int { decoder.framesDecoded }

    /// Short reads so far (filling thread).
    var readErrors: Int { decoder.readErrors }
}
