// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// Which parts of the benchmark to run, from the command line, and where the
/// speaker binary is. Parsing only; main thread.
struct BenchSections {
    /// The parts, in the order they run.
    enum Section: String, CaseIterable {
        case encoder, bounce, render, speaker, command, files, memory, mixes, mixclicks, mixrewind, mixmemory, fade, fleet
    }

    /// The parts to run (all when none was named).
    var selected: [Section]

    /// Usage text for `--help` and bad arguments.
    static let usage = """
        usage: speaker-bench [encoder] [bounce] [render] [speaker] [command] [files] [memory] [mixes] [mixclicks] [mixrewind] [mixmemory] [fade] [fleet]
          Prints one JSON line per figure on stdout: {"metric": …, "value": …, "unit": …}.
          With no arguments every section runs. The speaker section runs the
          ambient-speaker binary from $AMBIENT_SPEAKER_BIN, else the one next to
          this executable, against a private mosquitto on loopback; command:
          only setVolume → command/result beside the broker floor, interleaved
          in blocks (not part of the default run). files:
          instructions per audio-second under callgrind beside sox (valgrind,
          sox, strip); memory: Rss/Pss/private dirty playing a file sound;
          mixes: a 4-layer mix under callgrind beside sox -m, a generated
          layer added, the click metric across mix switches (mixclicks: that
          metric alone, no valgrind); mixrewind: the audio thread's
          instructions for the refill after a rewind with a 4-layer mix
          playing (pause, detent, switch; valgrind); mixmemory:
          Pss/private dirty over 70 s playing the 4-layer mix;
          fade: the sleep timer's 300 s fade measured on rendered audio (not
          part of the default run); fleet: $FLEET_SPEAKERS (default 200)
          simulated speakers on a private mosquitto followed by one
          `ambient-speaker watch`: its CPU and memory per speaker, and
          whether every lifecycle event came exactly once (not part of the
          default run).
        """

    /// Parses `arguments` (without the program name); nil for `--help` or an unknown word.
    init?(arguments: [String]) {
        var chosen: [Section] = []
        for argument in arguments {
            guard let section = Section(rawValue: argument) else { return nil }
            chosen.append(section)
        }
        selected = chosen.isEmpty ? Section.allCases.filter { $0 != .command && $0 != .fade && $0 != .fleet } : Section.allCases.filter(chosen.contains)
    }

    /// `$AMBIENT_SPEAKER_BIN`, else `ambient-speaker` next to this executable
    /// (TestSupport's lookup); throws when it is not an executable file.
    static func speakerExecutable() throws -> String {
        let path = try SpeakerProcess.binaryPath()
        guard access(path, X_OK) == 0 else {
            throw BenchError("\(path) is not an executable (build it with --product ambient-speaker, or set AMBIENT_SPEAKER_BIN)")
        }
        return path
    }
}
