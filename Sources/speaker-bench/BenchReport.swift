// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// Where the benchmark's output goes: one JSON line per figure on stdout
/// (`{"metric": "...", "value": N, "unit": "..."}`, exactly these keys) and
/// human chatter on stderr. Each line is one `write(2)`, unbuffered, so the
/// figures printed before a crash survive. Main thread only.
struct BenchReport {
    /// Writes one figure as a JSON line on stdout. Non-finite values are
    /// written as `null` (JSON has no NaN) and noted on stderr.
    func metric(_ name: String, _ value: Double, unit: String) {
        let number: String
        if value.isFinite {
            number = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        } else {
            number = "null"
            note("\(name): not a finite number (\(value))")
        }
        Self.writeLine(fd: 1, "{\"metric\": \"\(name)\", \"value\": \(number), \"unit\": \"\(unit)\"}")
    }

    /// Writes a line of explanation for people on stderr.
    func note(_ text: String) {
        StandardError.write("speaker-bench: \(text)\n")
    }

    private static func writeLine(fd: Int32, _ line: String) {
        // A failed write to stdout has nowhere to be reported.
        try? FileIO.writeAll(fd: fd, bytes: Array((line + "\n").utf8))
    }
}

/// A benchmark step that could not run (the figures it would give are
/// missing from the output; the reason goes to stderr).
struct BenchError: Error, CustomStringConvertible {
    /// What went wrong, for people.
    let description: String

    /// Creates an error with a message for people.
    init(_ description: String) { self.description = description }
}
