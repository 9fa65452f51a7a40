// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Ambience

/// What a rewind costs the audio thread with a 4-layer mix playing: the
/// instructions of rendering the refill after the device queue is taken
/// back, for a pause, a knob detent (gain ramp) and a switch to another
/// 4-layer mix (whose layers are all rendered for the whole refill).
///
/// The default audio settings (1024-frame periods, 4096-frame buffer, a
/// 256-frame margin): a rewind takes back 3,840 frames and the refill renders
/// them again as four periods. Measured under callgrind with
/// `--toggle-collect` on the refill alone (`speaker-bench rewind-probe KIND`,
/// this executable run again), generated layers (pink, rain, brown, white).
/// The HIL runs qemu with `-icount shift=2` (4 ns of guest time per
/// instruction), so each figure also gives its guest time.
struct MixRewindCost {
    /// The kinds of audible change measured, in report order.
    static let kinds = ["pause", "gain", "switch"]

    func run(report: BenchReport) throws {
        let cost = FileSoundCost(speakerExecutable: "")
        let valgrind = try FileSoundCost.tool("valgrind"), strip = try FileSoundCost.tool("strip")
        let dir = try BenchDirectory()
        defer { dir.remove() }
        let bench = dir.file("speaker-bench")
        try cost.runTool(strip, ["-g", "-o", bench, Self.ownExecutable()], dir: dir)
        for kind in Self.kinds {
            let n = try cost.instructions(valgrind, ["--toggle-collect=*rewindRefill*", bench, "rewind-probe", kind], dir: dir)
            report.metric("mix4_rewind_refill_\(kind)_instructions", Double(n), unit: "instructions")
            report.metric("mix4_rewind_refill_\(kind)_guest_ms_at_icount_shift_2", Double(n) * 4e-6, unit: "ms")
        }
    }

    /// This executable's path (`/proc/self/exe` resolved here: a child would see its own).
    static func ownExecutable() throws -> String {
        var path = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &path, path.count - 1)
        guard n > 0 else { throw BenchError("readlink /proc/self/exe failed (errno \(errno))") }
        return String(decoding: path[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The measured scenario, run in this process (`rewind-probe KIND`).
    static func probe(kind: String) -> Int32 {
        guard kinds.contains(kind) else { return 2 }
        let renderer = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024, historyFrames: 4096)
        renderer.play(mix(seed: 1), fadeFrames: 0)
        let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * 1024)
        defer { buffer.deallocate() }
        for _ in 0..<47 { renderer.render(into: buffer, frames: 1024) }  // about a second: the device queue is full
        let next = mix(seed: 9)  // made on the loop thread before the request reaches the audio thread
        let rendered = rewindRefill(renderer, kind: kind, next: next, buffer: buffer)
        while renderer.takeRetired() != nil {}
        return rendered == 3_840 ? 0 : 1
    }

    /// Rewinds 3,840 frames, applies the change and renders the refill in
    /// periods, as the audio thread does. Returns the frames rendered.
    @inline(never)
    static func rewindRefill(_ renderer: AmbienceRenderer, kind: String, next: MixSource,
                             buffer: UnsafeMutablePointer<Int16>) -> Int {
        let taken = renderer.rewind(frames: min(3_840, renderer.rewindableFrames(forSwitch: kind == "switch")))
        switch kind {
        case "pause": renderer.pause(fadeFrames: 4_800)
        case "gain": renderer.setGain(0.5, rampFrames: 2_880)
        default: renderer.crossfade(to: next, frames: 9_600)
        }
        var done = 0
        while done < taken {
            let n = min(1024, taken - done)
            renderer.render(into: buffer, frames: n)
            done += n
        }
        return done
    }

    private static func mix(seed: UInt64) -> MixSource {
        MixSource(layers: [("pink", PinkNoise(seed: seed), 0.9), ("rain", RainSound(sampleRate: 48_000, seed: seed + 1), 0.8),
                           ("brown", BrownNoise(sampleRate: 48_000, seed: seed + 2), 0.7), ("white", WhiteNoise(seed: seed + 3), 0.6)],
                  rampFrames: 4800)
    }
}
