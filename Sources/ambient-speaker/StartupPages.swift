// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// Hands the kernel back the read-only file pages (program code and
/// constants, its own and the libraries') that start-up faulted in and the
/// running speaker no longer touches.
///
/// After start-up most of the static-stdlib binary's resident code is code
/// that only start-up ran, plus what the kernel's fault-around read beside
/// it; playing uses a small part of it. The pages are clean and reclaimable,
/// so memory pressure would drop them anyway; `madvise(MADV_PAGEOUT)` drops
/// them now (pages another process also maps stay), and the pages still in
/// use are faulted back in on their next use. Writable and anonymous memory
/// is never touched. Main thread, once.
enum StartupPages {
    /// `MADV_PAGEOUT` (Linux 5.4) on every read-only file mapping of this
    /// process; returns the bytes advised (0 when /proc/self/maps can't be read).
    @discardableResult
    static func release() -> Int {
        guard let maps = try? FileIO.readText(path: "/proc/self/maps", maxBytes: 1 << 20) else { return 0 }
        var advised = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[5].hasPrefix("/"), fields[1] == "r-xp" || fields[1] == "r--p" else { continue }
            let range = fields[0].split(separator: "-")
            guard range.count == 2, let start = UInt(range[0], radix: 16), let end = UInt(range[1], radix: 16),
                  end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { continue }
            if madvise(address, Int(end - start), 21 /* MADV_PAGEOUT */) == 0 { advised += Int(end - start) }
        }
        return advised
    }
}
