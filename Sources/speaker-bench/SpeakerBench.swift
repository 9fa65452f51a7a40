// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// speaker-bench: measures the speaker's hot paths (knob decoding, sound
/// rendering) and its end-to-end MQTT latencies and memory, and prints one
/// JSON line per figure on stdout (chatter on stderr). It measures; it does
/// not assert. Exit status 0 when every section ran, 1 when one could not
/// (its figures are then missing from the output), 2 for bad arguments.
@main
struct SpeakerBench {
    /// Runs the sections named on the command line (all by default), in order.
    static func main() {
        let report = BenchReport()
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.count == 2 && arguments[0] == "rewind-probe" {
            // The scenario `mixrewind` measures, run under callgrind.
            exit(MixRewindCost.probe(kind: arguments[1]))
        }
        guard let sections = BenchSections(arguments: Array(CommandLine.arguments.dropFirst())) else {
            report.note(BenchSections.usage)
            exit(2)
        }
        var failed = false
        for section in sections.selected {
            report.note("section \(section.rawValue)")
            switch section {
            case .encoder:
                EncoderThroughput().run(report: report)
            case .bounce:
                EncoderBounce().run(report: report)
            case .render:
                RenderThroughput().run(report: report)
            case .fade:
                SleepFadeFigures().run(report: report)
            case .fleet:
                do {
                    let count = getenv("FLEET_SPEAKERS").flatMap { Int(String(cString: $0)) } ?? 200
                    _ = try BenchSections.speakerExecutable()
                    try FleetCost(speakers: max(1, count)).run(report: report)
                } catch {
                    report.note("fleet section failed: \(error)")
                    failed = true
                }
            case .mixclicks:
                MixCost(speakerExecutable: "").clickMetric(report: report)
            case .mixrewind:
                do {
                    try MixRewindCost().run(report: report)
                } catch {
                    report.note("mixrewind section failed: \(error)")
                    failed = true
                }
            case .files, .memory, .mixes, .mixmemory:
                do {
                    let speaker = try BenchSections.speakerExecutable()
                    if section == .files {
                        try FileSoundCost(speakerExecutable: speaker).run(report: report)
                    } else if section == .mixes {
                        try MixCost(speakerExecutable: speaker).run(report: report)
                    } else if section == .mixmemory {
                        try MixMemory(speakerExecutable: speaker).run(report: report)
                    } else {
                        try FileSoundMemory(speakerExecutable: speaker).run(report: report)
                    }
                } catch {
                    report.note("\(section.rawValue) section failed: \(error)")
                    failed = true
                }
            case .speaker, .command:
                do {
                    var latency = try SpeakerLatency(speakerExecutable: BenchSections.speakerExecutable())
                    if section == .command {
                        // 20 blocks of 50 floor round trips and 50 setVolume commands.
                        latency.interleavedBlocks = 20
                        latency.echoes = 1000
                        latency.volumeCommands = 1000
                    }
                    try latency.run(report: report)
                } catch {
                    report.note("speaker section failed: \(error)")
                    failed = true
                }
            }
        }
        exit(failed ? 1 : 0)
    }
}
