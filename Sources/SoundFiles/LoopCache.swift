// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// How many bytes of decoded loops (`LoopCache`) may be held at once, shared
/// by every file sound made with it (`audio.loopMemoryKB`). Any thread.
public final class LoopMemoryBudget: Sendable {
    /// The budget in bytes.
    public let bytes: Int
    private let used = Atomic<Int>(0)

    /// The configuration's default (`AudioSection.loopMemoryKB`), in KiB: a
    /// 30-second mono loop at 48 kHz as 16-bit samples (2,813 KiB) or a
    /// 16-second stereo one, small enough that playing any file keeps the
    /// speaker within its 8 MB Pss goal; longer stereo loops stream.
    public static let defaultKB = 3_072

    /// A budget of `bytes` (0 keeps every file streaming).
    public init(bytes: Int) { self.bytes = max(0, bytes) }

    /// Bytes currently reserved by live caches.
    public var reservedBytes: Int { used.load(ordering: .relaxed) }

    /// Reserves `count` bytes if they fit; false (nothing reserved) when not.
    func reserve(_ count: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while current + count <= bytes {
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + count,
                                                             ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
        return false
    }

    func release(_ count: Int) { used.subtract(count, ordering: .relaxed) }
}

/// One period of a short loop, decoded and resampled, at the output rate and
/// in the file's own channels, as 16-bit samples with 6 dB of headroom
/// (full scale = ±2.0, so the resampler's overshoot of a full-scale file is
/// never clipped). Its step (1/16384) is exactly one S16 output step after
/// `FileSound.headroom` (×0.5), so storing 16 bits instead of floats loses
/// nothing the output keeps at unity volume; libsoxr's medium quality is
/// 16-bit precision too.
///
/// Filled once by the decoding side while the first pass plays (`capture`),
/// then only read (`copy`), by one thread at a time: whoever decodes, or the
/// audio thread after `FileStream` hands it over with a release store.
final class LoopCache: @unchecked Sendable {
    // @unchecked Sendable: written by one thread before a release/acquire
    // hand-over (FileStream.cacheReady), read-only afterwards.
    /// Frames in one period.
    let frames: Int
    /// 1 (mono, up-mixed when copied out) or 2.
    let channels: Int
    /// Output frame (of the decoder's endless stream) that is cache frame 0.
    let startFrame: Int
    /// Frames captured so far (`frames` when complete).
    private(set) var captured = 0
    private let samples: UnsafeMutablePointer<Int16>
    private let budget: LoopMemoryBudget
    private let byteCount: Int
    static let scale: Float = 16_384

    /// Reserves `frames · channels · 2` bytes from `budget`; nil when they do not fit.
    init?(frames: Int, channels: Int, startFrame: Int, budget: LoopMemoryBudget) {
        byteCount = frames * channels * MemoryLayout<Int16>.stride
        guard frames > 0, budget.reserve(byteCount) else { return nil }
        self.frames = frames
        self.channels = channels
        self.startFrame = startFrame
        self.budget = budget
        guard let pages = PageBuffer.allocate(Int16.self, count: frames * channels) else {
            budget.release(byteCount)
            return nil
        }
        samples = pages
    }

    deinit {
        PageBuffer.free(samples, count: frames * channels)
        budget.release(byteCount)
    }

    /// True once every frame of the period has been captured.
    var isComplete: Bool { captured == frames }

    /// Bytes held.
    var bytes: Int { byteCount }

    /// Stores the frames of `block` (native channels) that fall in the
    /// period, given that `block` starts at output frame `firstFrame`. Frames
    /// must arrive in order (the decoder's stream does that).
    func capture(_ block: UnsafePointer<Float>, frames count: Int, firstFrame: Int) {
        let wanted = startFrame + captured
        let from = max(wanted, firstFrame), to = min(firstFrame + count, startFrame + frames)
        guard from < to, from == wanted else { return }
        let src = block + channels * (from - firstFrame), dst = samples + channels * captured
        let n = channels * (to - from)
        // Rounded to nearest (ties to even) with the 1.5 · 2²³ trick: after the
        // clamp, v + magic lies in [2²³, 2²⁴), where a float has no fraction
        // bits, and its low mantissa bits are the integer. No call, no trap:
        // the loop vectorizes (`rounded()` called roundf per sample).
        let magic: Float = 12_582_912
        for i in 0..<n {
            let v = min(max(src[i] * Self.scale, -32_768), 32_767)
            dst[i] = Int16(truncatingIfNeeded: Int32(bitPattern: (v + magic).bitPattern) &- Int32(bitPattern: magic.bitPattern))
        }
        captured += to - from
    }

    /// Copies `count` frames starting at period frame `index` (wrapping) to
    /// `out` as stereo floats times `gain`; returns the next index. Complete
    /// caches only. No allocation, lock or syscall: real-time safe.
    func copy(into out: UnsafeMutablePointer<Float>, frames count: Int, from index: Int, gain: Float) -> Int {
        var i = index, done = 0
        let g = gain / Self.scale
        while done < count {
            let n = min(count - done, frames - i)
            let dst = out + 2 * done
            if channels == 2 {
                let src = samples + 2 * i
                for k in 0..<(2 * n) { dst[k] = Float(src[k]) * g }
            } else {
                let src = samples + i
                for k in 0..<n {
                    let x = Float(src[k]) * g
                    dst[2 * k] = x
                    dst[2 * k + 1] = x
                }
            }
            done += n
            i += n
            if i == frames { i = 0 }
        }
        return i
    }
}
