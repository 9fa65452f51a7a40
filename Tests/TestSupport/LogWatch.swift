// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

extension SpeakerProcess {
    /// Waits until `check` holds for the speaker's log, re-reading the file
    /// whenever inotify says it was written (no sleeping between reads).
    /// Returns whether it held before `timeout`. One test thread.
    public func waitForLog(timeout: Double, until check: (String) -> Bool) -> Bool {
        waitForWrites(to: logPath, timeout: timeout) { check(log) }
    }
}

/// Re-evaluates `check` each time `path` is written (inotify), until it holds or `timeout` passes.
func waitForWrites(to path: String, timeout: Double, check: () -> Bool) -> Bool {
    let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
    let watch = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
    defer { if watch >= 0 { close(watch) } }
    if watch >= 0 { _ = inotify_add_watch(watch, path, UInt32(IN_MODIFY)) }
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        if check() { return true }
        let now = Monotonic.nanoseconds()
        guard now < deadline, watch >= 0 else { return check() }
        var entry = pollfd(fd: watch, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, Int32((deadline - now) / 1_000_000) + 1)
        while read(watch, &buffer, buffer.count) > 0 {}
    }
}
