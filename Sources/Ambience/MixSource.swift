// SPDX-License-Identifier: Apache-2.0
import Synchronization

/// A mix as one source: up to four layer sources summed, each with its own
/// gain that ramps toward a target, so the renderer plays a mix in one voice
/// (its crossfades, fades and rewinds are a mix's as they are a sound's).
///
/// The targets are set from the loop thread (`setLevel`) through atomics
/// and read by the audio thread once per block: no request queue, no lock,
/// no allocation. A target set before the first block is where the layer
/// starts (no ramp); afterwards the gain moves at most `1/rampFrames` per
/// frame, so a slider dragged fast never clicks. A silent layer (gain and
/// target 0) is not rendered. Everything is allocated in `init`.
public final class MixSource: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: `render` runs on one thread at a time (the audio
    // thread once handed over); `setLevel` touches only the atomics.

    /// The most layers a mix source mixes.
    public static let maxLayers = 4
    /// Frames rendered per pass into the layer buffer.
    static let chunkFrames = 1024

    /// The layers' ids (the catalog's sound ids), in layer order.
    public let layerIDs: [String]
    private let sources: ContiguousArray<SoundSource>
    /// The same sources where they can add themselves into the sum (`MixableSource`).
    private let mixable: ContiguousArray<MixableSource?>
    private let targets = LayerTargets()
    private var gains: ContiguousArray<Float>
    private var started = false
    private let stepPerFrame: Float
    private let scratch: UnsafeMutablePointer<Float>

    /// `layers`: (id, source, level on the volume curve), at most `maxLayers`
    /// (extra ones are ignored). `rampFrames`: frames for a full 0 → 1 change.
    public init(layers: [(id: String, source: SoundSource, level: Double)], rampFrames: Int) {
        let used = layers.prefix(Self.maxLayers)
        layerIDs = used.map(\.id)
        sources = ContiguousArray(used.map(\.source))
        mixable = ContiguousArray(used.map { $0.source.mixable })
        gains = ContiguousArray(repeating: 0, count: used.count)
        stepPerFrame = 1 / Float(max(1, rampFrames))
        scratch = .allocate(capacity: 2 * Self.chunkFrames)
        scratch.initialize(repeating: 0, count: 2 * Self.chunkFrames)
        for (i, layer) in used.enumerated() { targets.store(i, VolumeCurve.gain(level: layer.level)) }
    }

    deinit { scratch.deallocate() }

    /// The layer sources (for the owner's bookkeeping off the audio thread).
    public var layerSources: [SoundSource] { Array(sources) }

    /// Sets layer `soundID`'s level (volume curve, [0, 1]); false when the
    /// mix has no such layer. Any thread; the audio thread ramps to it.
    @discardableResult
    public func setLevel(soundID: String, level: Double) -> Bool {
        guard let index = layerIDs.firstIndex(of: soundID) else { return false }
        targets.store(index, VolumeCurve.gain(level: level))
        return true
    }

    /// The gain layer `index` is heading for (tests, benchmarks).
    public func targetGain(layer index: Int) -> Float { targets.load(index) }

    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        if !started {
            started = true
            for i in 0..<gains.count { gains[i] = targets.load(i) }
        }
        var done = 0
        while done < frames {
            let n = min(Self.chunkFrames, frames - done)
            renderChunk(into: buffer + 2 * done, frames: n)
            done += n
        }
    }

    /// Sums the layers into `out` (`n` ≤ `chunkFrames`).
    private func renderChunk(into out: UnsafeMutablePointer<Float>, frames n: Int) {
        var first = true
        for i in 0..<sources.count {
            let target = targets.load(i)
            var gain = gains[i]
            if gain == 0 && target == 0 { continue }
            if gain == target && !first, let adding = mixable[i] {
                adding.render(adding: out, frames: n, gain: gain)
                continue
            }
            sources[i].render(into: scratch, frames: n)
            if gain == target {
                if first {
                    for s in 0..<(2 * n) { out[s] = scratch[s] * gain }
                } else {
                    for s in 0..<(2 * n) { out[s] += scratch[s] * gain }
                }
            } else {
                let step = stepPerFrame
                if first { out.update(repeating: 0, count: 2 * n) }
                for f in 0..<n {
                    gain = gain < target ? min(target, gain + step) : max(target, gain - step)
                    out[2 * f] += scratch[2 * f] * gain
                    out[2 * f + 1] += scratch[2 * f + 1] * gain
                }
                gains[i] = gain
            }
            first = false
        }
        if first { out.update(repeating: 0, count: 2 * n) }
    }
}

/// Four layer targets (linear gains as bit patterns), written by any thread,
/// read by the audio thread. Its own class: `Atomic` is not copyable, so the
/// four live in stored properties.
final class LayerTargets: Sendable {
    private let t0 = Atomic<UInt32>(0)
    private let t1 = Atomic<UInt32>(0)
    private let t2 = Atomic<UInt32>(0)
    private let t3 = Atomic<UInt32>(0)

    @inline(__always)
    func store(_ index: Int, _ gain: Float) {
        let bits = gain.bitPattern
        switch index {
        case 0: t0.store(bits, ordering: .relaxed)
        case 1: t1.store(bits, ordering: .relaxed)
        case 2: t2.store(bits, ordering: .relaxed)
        default: t3.store(bits, ordering: .relaxed)
        }
    }

    @inline(__always)
    func load(_ index: Int) -> Float {
        switch index {
        case 0: return Float(bitPattern: t0.load(ordering: .relaxed))
        case 1: return Float(bitPattern: t1.load(ordering: .relaxed))
        case 2: return Float(bitPattern: t2.load(ordering: .relaxed))
        default: return Float(bitPattern: t3.load(ordering: .relaxed))
        }
    }
}
