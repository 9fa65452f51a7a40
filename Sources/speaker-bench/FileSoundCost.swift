// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import TestSupport

/// The cost of sounds in instructions per audio-second (valgrind callgrind,
/// no perf counters needed), each beside sox doing the same job in the same
/// run. Start-up is removed by subtracting a shorter run from a longer one
/// (for a loop, both runs are past its first pass, so the figure is the
/// steady loop). valgrind 3.19 cannot read the DWARF 5 swiftc emits, so a
/// `strip -g` copy of the speaker is measured.
///
/// - `pink_instructions_per_audio_second` vs `sox_pinknoise_…` (`sox -n … synth pinknoise vol 0.5`);
/// - `file_stream_…`: a 120-s mono 44.1 kHz FLAC to 48 kHz stereo (decode,
///   resample, gain; too long to cache) vs `sox in.flac -r 48000 -c 2 … vol 0.5`;
/// - `file_loop_…`: a 7-s mono 44.1 kHz FLAC looped (cached after its first
///   pass) vs `sox in.flac -r 48000 -c 2 … repeat vol 0.5`, and vs the goal of
///   2 M and `sox_raw_copy_…` (sox copying the same S16 output, raw to raw).
struct FileSoundCost {
    /// Audio-seconds between the two runs of each pair.
    var seconds = 20
    /// The `ambient-speaker` binary to measure.
    var speakerExecutable: String

    func run(report: BenchReport) throws {
        let valgrind = try Self.tool("valgrind"), sox = try Self.tool("sox"), strip = try Self.tool("strip")
        let dir = try BenchDirectory()
        defer { dir.remove() }
        try dir.makeDirectory("sounds")
        try dir.makeDirectory("state")
        let speaker = dir.file("speaker")
        try runTool(strip, ["-g", "-o", speaker, speakerExecutable], dir: dir)
        try runTool(sox, ["-n", "-r", "44100", "-c", "1", "-b", "16", dir.file("sounds/loop7.flac"), "synth", "7", "pinknoise", "vol", "0.5"], dir: dir)
        try runTool(sox, ["-n", "-r", "44100", "-c", "1", "-b", "16", dir.file("sounds/long.flac"), "synth", "120", "pinknoise", "vol", "0.5"], dir: dir)
        try dir.write("config.json", text: "{\"audio\": {\"soundsDirectory\": \"\(dir.file("sounds"))\"}, \"stateDirectory\": \"\(dir.file("state"))\"}")
        let out = dir.file("out.raw")
        func render(_ id: String) -> (Int) -> [String] {
            { s in [speaker, "render", id, "--seconds", String(s), "--output", out, "--config", dir.file("config.json")] }
        }
        func perSecond(from base: Int, _ command: (Int) -> [String]) throws -> Double {
            let long = try instructions(valgrind, command(base + seconds), dir: dir)
            let short = try instructions(valgrind, command(base), dir: dir)
            return Double(long - short) / Double(seconds)
        }
        let pink = try perSecond(from: 1, render("pink"))
        let soxPink = try perSecond(from: 1) { s in [sox, "-n", "-r", "48000", "-c", "2", "-b", "16", out, "synth", String(s), "pinknoise", "vol", "0.5"] }
        report.metric("pink_instructions_per_audio_second", pink, unit: "instructions/s")
        report.metric("sox_pinknoise_instructions_per_audio_second", soxPink, unit: "instructions/s")
        report.metric("pink_vs_sox", pink / soxPink, unit: "ratio")

        let stream = try perSecond(from: 1, render("long"))
        let soxStream = try perSecond(from: 1) { s in
            [sox, dir.file("sounds/long.flac"), "-r", "48000", "-c", "2", "-b", "16", out, "vol", "0.5", "trim", "0", String(s)]
        }
        report.metric("file_stream_instructions_per_audio_second", stream, unit: "instructions/s")
        report.metric("sox_file_instructions_per_audio_second", soxStream, unit: "instructions/s")
        report.metric("file_stream_vs_sox", stream / soxStream, unit: "ratio")

        let loop = try perSecond(from: 10, render("loop7"))
        let soxLoop = try perSecond(from: 1) { s in
            [sox, dir.file("sounds/loop7.flac"), "-r", "48000", "-c", "2", "-b", "16", out, "repeat", "100", "vol", "0.5", "trim", "0", String(s)]
        }
        let raw = dir.file("copy.raw")
        try runTool(sox, ["-n", "-r", "48000", "-c", "2", "-b", "16", raw, "synth", String(seconds + 2), "whitenoise"], dir: dir)
        let soxCopy = try perSecond(from: 1) { s in
            [sox, "-t", "raw", "-r", "48000", "-c", "2", "-b", "16", "-e", "signed", raw, "-t", "raw", out, "trim", "0", String(s)]
        }
        report.metric("file_loop_instructions_per_audio_second", loop, unit: "instructions/s")
        report.metric("sox_file_loop_instructions_per_audio_second", soxLoop, unit: "instructions/s")
        report.metric("file_loop_vs_sox", loop / soxLoop, unit: "ratio")
        report.metric("file_loop_goal_instructions_per_audio_second", 2_000_000, unit: "instructions/s")
        report.metric("sox_raw_copy_instructions_per_audio_second", soxCopy, unit: "instructions/s")
        report.note("callgrind, \(seconds) audio-seconds per pair: pink \(Int(pink)) vs sox \(Int(soxPink)); "
            + "streamed FLAC \(Int(stream)) vs sox \(Int(soxStream)); looped FLAC \(Int(loop)) vs sox \(Int(soxLoop)), "
            + "sox raw copy \(Int(soxCopy))")
    }

    /// Total instructions of one command under callgrind (its `summary:` line).
    func instructions(_ valgrind: String, _ command: [String], dir: BenchDirectory) throws -> Int {
        let outFile = dir.file("callgrind.out")
        unlink(outFile)
        try runTool(valgrind, ["--tool=callgrind", "--callgrind-out-file=" + outFile] + command, dir: dir)
        let text = (try? FileIO.readText(path: outFile, maxBytes: 64 << 20)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("summary:") {
            if let n = line.split(separator: " ").last.flatMap({ Int($0) }) { return n }
        }
        throw BenchError("no callgrind summary for \(command.joined(separator: " "))")
    }

    /// Runs `tool` to completion (output to the directory's tool.log); throws unless it exits 0.
    func runTool(_ tool: String, _ arguments: [String], dir: BenchDirectory) throws {
        let child = try ChildProcess(executable: tool, arguments: arguments, logPath: dir.file("tool.log"))
        guard let code = child.waitForExit(timeout: 600) else {
            child.send(SIGKILL)
            throw BenchError("\(tool) did not finish in 10 minutes")
        }
        guard code == 0 else { throw BenchError("\(tool) \(arguments.joined(separator: " ")) exited \(code):\n" + dir.tail("tool.log")) }
    }

    /// The absolute path of `name` on `$PATH`.
    static func tool(_ name: String) throws -> String {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where access("\(directory)/\(name)", X_OK) == 0 {
            return "\(directory)/\(name)"
        }
        throw BenchError("\(name) not found on PATH (apt-get install valgrind sox binutils)")
    }
}
