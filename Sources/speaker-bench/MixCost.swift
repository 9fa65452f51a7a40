// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Ambience
import SpeakerSystem
import TestSupport

/// What a mix costs, each figure beside its anchor from the same run:
///
/// - `mix4_instructions_per_audio_second`: `render` of a 4-layer mix (pink
///   and rain generated, two 120-s 44.1 kHz mono FLACs streamed and
///   resampled to 48 kHz stereo, each at its own level) under callgrind,
///   vs `sox -m` doing the same mix with sox resampling the two FLACs and
///   generating two noises (pink, brown: sox has no rain), children traced
///   and summed (`sox_mix4_pipeline_…`), and vs `sox -m` of the four layers
///   already decoded to 48 kHz stereo WAVs (mixing and gain alone);
/// - `mix4_build_instructions`: making that mix (`makeMixSource`: files
///   opened, resamplers set up; the `render` command's direct decoding, so
///   without the read-ahead's priming);
/// - `mix_generated_layer_added_…`: a mix of pink and rain minus a mix of
///   pink alone (the whole cost of one more generated layer), with
///   `mix_layer_overhead_…` (that minus rain played alone: the mixing), and
///   pink alone beside them;
/// - the click metric across a switch between two mixes (in-process, the
///   player's renderer): the largest sample-to-sample step of the output vs
///   the two mixes' own.
/// Start-up is removed as in `FileSoundCost` (a longer run minus a shorter).
struct MixCost {
    var seconds = 20
    var speakerExecutable: String

    func run(report: BenchReport) throws {
        let cost = FileSoundCost(seconds: seconds, speakerExecutable: speakerExecutable)
        let valgrind = try FileSoundCost.tool("valgrind"), sox = try FileSoundCost.tool("sox"), strip = try FileSoundCost.tool("strip")
        let dir = try BenchDirectory()
        defer { dir.remove() }
        try dir.makeDirectory("sounds")
        try dir.makeDirectory("state")
        try dir.makeDirectory("cg")
        let speaker = dir.file("speaker")
        try cost.runTool(strip, ["-g", "-o", speaker, speakerExecutable], dir: dir)
        try cost.runTool(sox, ["-n", "-r", "44100", "-c", "1", "-b", "16", dir.file("sounds/streamA.flac"), "synth", "120", "pinknoise", "vol", "0.5"], dir: dir)
        try cost.runTool(sox, ["-n", "-r", "44100", "-c", "1", "-b", "16", dir.file("sounds/streamB.flac"), "synth", "120", "brownnoise", "vol", "0.5"], dir: dir)
        let mixes = """
            [{"id":"mix4","name":"Four","layers":[{"soundID":"pink","level":0.9},{"soundID":"rain","level":0.8},\
            {"soundID":"streama","level":0.7},{"soundID":"streamb","level":0.6}]},\
            {"id":"mixp","name":"P","layers":[{"soundID":"pink","level":0.9}]},\
            {"id":"mixpr","name":"PR","layers":[{"soundID":"pink","level":0.9},{"soundID":"rain","level":0.8}]}]
            """
        try dir.write("config.json", text: "{\"audio\": {\"soundsDirectory\": \"\(dir.file("sounds"))\"}, "
                      + "\"stateDirectory\": \"\(dir.file("state"))\", \"mixes\": \(mixes)}")
        let out = dir.file("out.raw")
        func render(_ id: String) -> (Int) -> [String] {
            { s in [speaker, "render", id, "--seconds", String(s), "--output", out, "--config", dir.file("config.json")] }
        }
        func perSecond(_ command: (Int) -> [String], children: Bool = false) throws -> Double {
            let long = try children ? tree(valgrind, command(1 + seconds), dir: dir) : cost.instructions(valgrind, command(1 + seconds), dir: dir)
            let short = try children ? tree(valgrind, command(1), dir: dir) : cost.instructions(valgrind, command(1), dir: dir)
            return Double(long - short) / Double(seconds)
        }
        let mix4 = try perSecond(render("mix4"))
        let soxPipeline = try perSecond({ s in
            [sox, "-m",
             "-v", "0.9", "|\(sox) -n -r 48000 -c 2 -b 16 -p synth \(s) pinknoise",
             "-v", "0.8", "|\(sox) -n -r 48000 -c 2 -b 16 -p synth \(s) brownnoise",
             "-v", "0.7", "|\(sox) \(dir.file("sounds/streamA.flac")) -p rate 48000 channels 2 trim 0 \(s)",
             "-v", "0.6", "|\(sox) \(dir.file("sounds/streamB.flac")) -p rate 48000 channels 2 trim 0 \(s)",
             "-r", "48000", "-c", "2", "-b", "16", out]
        }, children: true)
        for (i, name) in ["pinknoise", "brownnoise"].enumerated() {
            try cost.runTool(sox, ["-n", "-r", "48000", "-c", "2", "-b", "16", dir.file("layer\(i).wav"), "synth", String(seconds + 2), name], dir: dir)
        }
        for (i, name) in ["streamA", "streamB"].enumerated() {
            try cost.runTool(sox, [dir.file("sounds/\(name).flac"), "-r", "48000", "-c", "2", "-b", "16", dir.file("layer\(i + 2).wav"), "trim", "0", String(seconds + 2)], dir: dir)
        }
        let soxDecoded = try perSecond { s in
            [sox, "-m", "-v", "0.9", dir.file("layer0.wav"), "-v", "0.8", dir.file("layer1.wav"), "-v", "0.7", dir.file("layer2.wav"),
             "-v", "0.6", dir.file("layer3.wav"), "-b", "16", out, "trim", "0", String(s)]
        }
        report.metric("mix4_instructions_per_audio_second", mix4, unit: "instructions/s")
        report.metric("sox_mix4_pipeline_instructions_per_audio_second", soxPipeline, unit: "instructions/s")
        report.metric("mix4_vs_sox_pipeline", mix4 / soxPipeline, unit: "ratio")
        report.metric("mix4_vs_sox_pipeline_goal", 0.25, unit: "ratio")
        report.metric("sox_mix4_decoded_wavs_instructions_per_audio_second", soxDecoded, unit: "instructions/s")
        // Making the mix (what the loop thread does before a switch reaches the
        // audio thread): its files opened, resamplers set up, generators seeded.
        let build = try cost.instructions(valgrind, ["--toggle-collect=*makeMixSource*"] + render("mix4")(1), dir: dir)
        report.metric("mix4_build_instructions", Double(build), unit: "instructions")

        let pinkAlone = try perSecond(render("pink"))
        let rainAlone = try perSecond(render("rain"))
        let mixP = try perSecond(render("mixp"))
        let mixPR = try perSecond(render("mixpr"))
        report.metric("pink_instructions_per_audio_second", pinkAlone, unit: "instructions/s")
        report.metric("rain_instructions_per_audio_second", rainAlone, unit: "instructions/s")
        report.metric("mix_pink_instructions_per_audio_second", mixP, unit: "instructions/s")
        report.metric("mix_pink_rain_instructions_per_audio_second", mixPR, unit: "instructions/s")
        report.metric("mix_generated_layer_added_instructions_per_audio_second", mixPR - mixP, unit: "instructions/s")
        report.metric("mix_layer_overhead_instructions_per_audio_second", mixPR - mixP - rainAlone, unit: "instructions/s")
        report.metric("mix_generated_layer_added_goal_instructions_per_audio_second", 1_500_000, unit: "instructions/s")
        report.note("callgrind, \(seconds) audio-seconds per pair: 4-layer mix \(Int(mix4)) vs sox -m pipeline \(Int(soxPipeline)) "
            + "(decoded WAVs \(Int(soxDecoded))); mix pink \(Int(mixP)), pink+rain \(Int(mixPR)), pink alone \(Int(pinkAlone)), rain alone \(Int(rainAlone))")
        clickMetric(report: report)
    }

    /// Total instructions of `command` and every process it starts
    /// (`--trace-children`), summed over callgrind's per-process files.
    private func tree(_ valgrind: String, _ command: [String], dir: BenchDirectory) throws -> Int {
        let cg = dir.file("cg")
        for name in (try? FileIO.names(in: cg)) ?? [] { unlink(cg + "/" + name) }
        try FileSoundCost(speakerExecutable: speakerExecutable).runTool(
            valgrind, ["--tool=callgrind", "--trace-children=yes", "--callgrind-out-file=\(cg)/out.%p"] + command, dir: dir)
        var total = 0
        for name in (try? FileIO.names(in: cg)) ?? [] {
            let text = (try? FileIO.readText(path: cg + "/" + name, maxBytes: 64 << 20)) ?? ""
            for line in text.split(separator: "\n") where line.hasPrefix("summary:") {
                total += line.split(separator: " ").last.flatMap { Int($0) } ?? 0
            }
        }
        guard total > 0 else { throw BenchError("no callgrind summaries for \(command.joined(separator: " "))") }
        return total
    }

    /// The loops' click metric across a switch between two mixes: the
    /// largest step between neighbouring samples of the output, beside the
    /// largest of each mix on its own (rendered the same way, no switch).
    func clickMetric(report: BenchReport) {
        func a(pink: Double = 0.8, white: Double = 0.2) -> MixSource {
            MixSource(layers: [("pink", PinkNoise(seed: 1), pink), ("rain", RainSound(sampleRate: 48_000, seed: 2), 0.6),
                               ("white", WhiteNoise(seed: 5), white), ("surf", SurfSound(sampleRate: 48_000, seed: 6), 0.5)], rampFrames: 4800)
        }
        func b() -> MixSource {
            MixSource(layers: [("brown", BrownNoise(sampleRate: 48_000, seed: 3), 0.9), ("surf", SurfSound(sampleRate: 48_000, seed: 4), 0.7)],
                      rampFrames: 4800)
        }
        func steps(_ plan: (AmbienceRenderer, (Int) -> Void) -> Void) -> Float {
            let r = AmbienceRenderer(sampleRate: 48_000, maxFrames: 1024)
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2048)
            defer { buffer.deallocate() }
            var worst: Float = 0, last: Float = 0, first = true
            plan(r) { frames in
                var left = frames
                while left > 0 {
                    let n = min(1024, left)
                    r.renderFloat(into: buffer, frames: n)
                    for i in 0..<n {
                        let x = buffer[2 * i]
                        if !first { worst = max(worst, abs(x - last)) }
                        last = x
                        first = false
                    }
                    left -= n
                }
                while r.takeRetired() != nil {}
            }
            return worst
        }
        let ownA = steps { r, run in r.play(a(), fadeFrames: 0); run(240_000) }
        let ownB = steps { r, run in r.play(b(), fadeFrames: 0); run(240_000) }
        let across = steps { r, run in
            r.play(a(), fadeFrames: 0); run(48_000)
            r.crossfade(to: b(), frames: 72_000); run(96_000)
            r.crossfade(to: a(), frames: 72_000); run(96_000)
        }
        // The layer changes end at pink 1, white 1: the loudest the mix gets, its own steps the bound.
        let ownLoud = steps { r, run in r.play(a(pink: 1, white: 1), fadeFrames: 0); run(240_000) }
        let layerChange = steps { r, run in
            let mix = a()
            r.play(mix, fadeFrames: 0); run(48_000)
            mix.setLevel(soundID: "pink", level: 0.1); run(24_000)
            mix.setLevel(soundID: "white", level: 1); run(24_000)
            mix.setLevel(soundID: "pink", level: 1); run(48_000)
        }
        report.metric("mix_switch_max_step", Double(across), unit: "full scale")
        report.metric("mix_layer_change_max_step", Double(layerChange), unit: "full scale")
        report.metric("mix_layer_change_bound_max_step", Double(ownLoud), unit: "full scale")
        report.metric("mix_a_own_max_step", Double(ownA), unit: "full scale")
        report.metric("mix_b_own_max_step", Double(ownB), unit: "full scale")
        report.metric("mix_switch_bound_max_step", Double((ownA * ownA + ownB * ownB).squareRoot()), unit: "full scale")
    }
}
