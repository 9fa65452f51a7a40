// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem

/// Reads a process's resident set size from `/proc/<pid>/status`. Any thread.
enum ResidentMemory {
    /// `VmRSS` of `pid` in kB (the line reads `VmRSS:\t  12345 kB`), or nil when it cannot be read (the process
    /// has exited, or there is no /proc).
    static func kilobytes(pid: Int32) -> Int? {
        guard let text = try? FileIO.readText(path: "/proc/\(pid)/status", maxBytes: 16_384) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.dropFirst("VmRSS:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        }
        return nil
    }
}
