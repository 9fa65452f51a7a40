// SPDX-License-Identifier: Apache-2.0
@testable import AudioALSA
#if canImport(Glibc)
import Glibc
#endif

/// A playback device whose clock the test advances by hand, around a real
/// alsa-lib pcm: every frame goes through alsa-lib to a file, and the rewind
/// questions (`snd_pcm_rewindable`, `snd_pcm_rewind`) are answered by that
/// pcm. Only the clock is the test's: alsa-lib's card-less pcms have none
/// (`snd_pcm_delay` is 0), so this adds what a sound card has, a queue of
/// `capacity` frames that `write` fills (blocking while it is full) and
/// `play(frames:)` empties. Nothing here depends on how long anything takes.
///
/// The audio thread calls the `PCMOutput` methods; the test thread calls the
/// rest. Shared state is guarded by one mutex.
final class ManualClockPCM: PCMOutput, @unchecked Sendable {
    /// What the device was asked, in order.
    enum Call: Equatable {
        case rewindable(answer: Int, queued: Int, accepted: Int)
        case rewind(frames: Int, answer: Int, queuedAfter: Int)
    }

    let inner: ALSAPlayback
    let capacity: Int
    var negotiated: ALSAPlayback.Negotiated { inner.negotiated }

    // Allocated, not stored inline: pthread objects must not move.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queued = 0
    private var accepted = 0
    private var writes = 0
    private var writerWaiting = false
    private var freeRunning = false
    private var log: [Call] = []

    init(_ inner: ALSAPlayback) {
        self.inner = inner
        capacity = inner.negotiated.bufferFrames
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    // MARK: - The device (audio thread)

    func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(ALSAError) -> Int {
        pthread_mutex_lock(mutex)
        while !freeRunning && queued + frames > capacity {
            writerWaiting = true
            pthread_cond_broadcast(changed)
            pthread_cond_wait(changed, mutex)
        }
        writerWaiting = false
        queued = freeRunning ? 0 : queued + frames
        accepted += frames
        writes += 1
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
        return try inner.write(samples, frames: frames)
    }

    /// Always room: this device's `write` itself waits for the test's clock
    /// (as an alsa-lib pcm without poll descriptors would block in its write).
    func waitForRoom(wake: Int32, timeoutNanos: Int64) -> DeviceWait.Outcome { .room }

    func delay() -> Int { locked { queued } }

    /// alsa-lib's answer, but never more than the queue: what the device has
    /// played can't be taken back (a card-less pcm would offer it).
    func rewindable() -> Int {
        let pcmAnswer = inner.rewindable()
        return locked {
            let answer = pcmAnswer < 0 ? pcmAnswer : min(pcmAnswer, queued)
            log.append(.rewindable(answer: answer, queued: queued, accepted: accepted))
            pthread_cond_broadcast(changed)
            return answer
        }
    }

    func rewind(frames: Int) -> Int {
        let answer = inner.rewind(frames: frames)
        locked {
            if answer > 0 {
                queued -= answer
                accepted -= answer
            }
            log.append(.rewind(frames: frames, answer: answer, queuedAfter: queued))
            pthread_cond_broadcast(changed)
        }
        return answer
    }

    func drop() {
        inner.drop()
        locked { queued = 0 }
    }

    func prepare() throws(ALSAError) { try inner.prepare() }

    func close() { inner.close() }

    // MARK: - The test's side

    /// The device plays `frames` frames of its queue, freeing room for the writer.
    func play(frames: Int) {
        locked {
            queued = max(0, queued - frames)
            pthread_cond_broadcast(changed)
        }
    }

    /// From now on the device takes every write at once (for shutting down).
    func runFree() {
        locked {
            freeRunning = true
            queued = 0
            pthread_cond_broadcast(changed)
        }
    }

    /// Frames the device holds (accepted and not played or taken back).
    var queuedFrames: Int { locked { queued } }
    /// Frames the device has accepted in all, less those taken back.
    var acceptedFrames: Int { locked { accepted } }
    /// Writes the device has accepted (never decreases).
    var acceptedWrites: Int { locked { writes } }
    /// Everything the audio thread asked about rewinding, in order.
    var calls: [Call] { locked { log } }

    /// Waits (up to `seconds`, a guard against a hang, not a measurement) until
    /// more than `count` writes have been accepted and the writer is blocked
    /// on a full queue again.
    @discardableResult
    func waitUntilBlocked(afterWrites count: Int, seconds: Int = 10) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += seconds
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !(writerWaiting && writes > count) {
            if pthread_cond_timedwait(changed, mutex, &deadline) == ETIMEDOUT { return writerWaiting && writes > count }
        }
        return true
    }
}
