// SPDX-License-Identifier: Apache-2.0
import Ambience
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A single-producer / single-consumer ring of stereo float frames: the
/// read-ahead thread writes decoded audio, the audio thread reads it.
///
/// Neither side allocates, locks or makes a syscall. Frames are written into
/// preallocated memory, then published with a release store of `tail`; the
/// reader publishes what it consumed with a release store of `head`.
final class SampleRing: @unchecked Sendable {
    // @unchecked Sendable: each region of `storage` is owned by one side at a
    // time, handed over by the acquire/release pairs on `head` and `tail`.
    /// Capacity in frames (a power of two).
    let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutablePointer<Float>
    /// True when `storage` came from `PageBuffer` (else from malloc).
    private let mapped: Bool
    private let head = Atomic<Int>(0)  // frames read (consumer-owned)
    private let tail = Atomic<Int>(0)  // frames written (producer-owned)

    /// A ring holding at least `minimumFrames` frames.
    init(minimumFrames: Int) {
        var c = 64
        while c < minimumFrames { c <<= 1 }
        capacity = c
        mask = c - 1
        if let pages = PageBuffer.allocate(Float.self, count: 2 * c) {
            storage = pages  // zero-filled by the kernel
            mapped = true
        } else {
            storage = .allocate(capacity: 2 * c)
            storage.initialize(repeating: 0, count: 2 * c)
            mapped = false
        }
    }

    deinit {
        if mapped { PageBuffer.free(storage, count: 2 * capacity) } else { storage.deallocate() }
    }

    /// Hands the ring's memory back to the kernel (`madvise(MADV_DONTNEED)` on
    /// the whole pages inside it) once neither side will use it again: a loop
    /// now played from its cache. Reading it afterwards would give zeros.
    func discardStorage() {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (Int(bitPattern: storage) + page - 1) / page * page
        let end = (Int(bitPattern: storage + 2 * capacity)) / page * page
        guard page > 0, end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(address, end - start, MADV_DONTNEED)
    }

    /// Frames ready to read. Either side.
    var available: Int { tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring) }

    /// Producer: frames that can be written now.
    var free: Int { capacity - (tail.load(ordering: .relaxed) &- head.load(ordering: .acquiring)) }

    /// Producer: writes `frames ≤ free` frames by calling `fill` with up to two
    /// contiguous regions (pointer, frames), then publishes them.
    func write(frames: Int, _ fill: (UnsafeMutablePointer<Float>, Int) -> Void) {
        let t = tail.load(ordering: .relaxed)
        let n = min(frames, free)
        guard n > 0 else { return }
        let start = t & mask
        let first = min(n, capacity - start)
        fill(storage + 2 * start, first)
        if n > first { fill(storage, n - first) }
        tail.store(t &+ n, ordering: .releasing)
    }

    /// Consumer: copies up to `frames` frames to `out`, multiplied by `gain`
    /// (the copy does the scaling); returns how many. Real-time safe.
    func read(into out: UnsafeMutablePointer<Float>, frames: Int, gain: Float = 1) -> Int {
        let h = head.load(ordering: .relaxed)
        let n = min(frames, tail.load(ordering: .acquiring) &- h)
        guard n > 0 else { return 0 }
        let start = h & mask
        let first = min(n, capacity - start)
        SampleConversion.scale(storage + 2 * start, by: gain, into: out, count: 2 * first)
        if n > first { SampleConversion.scale(storage, by: gain, into: out + 2 * first, count: 2 * (n - first)) }
        head.store(h &+ n, ordering: .releasing)
        return n
    }
}
