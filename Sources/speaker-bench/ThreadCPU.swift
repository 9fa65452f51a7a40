// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem

/// CPU time per thread of a process, from `/proc/<pid>/task/<tid>/schedstat`
/// (its first field: nanoseconds on a CPU). Read before and after a phase of
/// the benchmark, the difference says which of the speaker's threads did the
/// work of that phase and how much, without a profiler's overhead. Any thread.
struct ThreadCPU {
    /// Nanoseconds on a CPU so far, by thread id.
    var nanoseconds: [Int: UInt64] = [:]

    /// Reads every thread of `pid` now (threads that cannot be read are left out).
    init(pid: Int32) {
        guard let tids = try? FileIO.names(in: "/proc/\(pid)/task") else { return }
        for name in tids {
            guard let tid = Int(name),
                  let text = try? FileIO.readText(path: "/proc/\(pid)/task/\(name)/schedstat", maxBytes: 256),
                  let first = text.split(separator: " ").first, let ns = UInt64(first) else { continue }
            nanoseconds[tid] = ns
        }
    }

    /// Nanoseconds each thread spent since `earlier`, busiest first (a
    /// thread that ended in between is left out).
    func since(_ earlier: ThreadCPU) -> [(tid: Int, nanoseconds: UInt64)] {
        nanoseconds.compactMap { tid, ns in earlier.nanoseconds[tid].map { (tid, ns &- $0) } }
            .sorted { $0.nanoseconds > $1.nanoseconds }
    }
}
