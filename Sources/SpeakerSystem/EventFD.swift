// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// An `eventfd(2)` counter: the one way a thread wakes another — the main
/// ``EventLoop`` (register ``fd`` with ``EventLoop/addReader(fd:_:)``) or a
/// worker thread blocked in ``wait(timeoutNanos:)`` (the audio thread).
///
/// Any thread calls ``signal()``; the waiting side calls ``drain()``.
/// ``signal()``, ``drain()`` and ``wait(timeoutNanos:)`` are single system
/// calls through the ``systemCall(_:path:_:)`` funnel and never allocate on
/// success, so a real-time thread may use them. The descriptor is
/// non-blocking and close-on-exec, and closed on deinit (when the last owner,
/// e.g. a worker thread still running, lets go).
// @unchecked Sendable: the only stored state is the immutable descriptor;
// write(2)/read(2)/poll(2) on an eventfd are atomic in the kernel.
public final class EventFD: @unchecked Sendable {
    /// The descriptor to poll for readability.
    public let fd: Int32

    /// Creates the eventfd (`eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`).
    public init() throws(SystemError) {
        let calls = try LinuxCalls.shared()
        fd = try systemCall("eventfd") { calls.eventfd(0, O_NONBLOCK | O_CLOEXEC) }
    }

    deinit { close(fd) }

    /// Adds one to the counter, making ``fd`` readable. Any thread.
    public func signal() {
        var one: UInt64 = 1
        // Only fails (EAGAIN) when the counter is at 2^64-2: the other side is
        // already guaranteed to wake, so the failure is harmless.
        _ = try? systemCall("write") { write(fd, &one, 8) }
    }

    /// Reads and resets the counter; answers how many signals arrived since
    /// the last drain (0 if none). The waiting side only.
    @discardableResult
    public func drain() -> UInt64 {
        var value: UInt64 = 0
        let got = (try? systemCallUnlessWouldBlock("read") { read(fd, &value, 8) }) ?? nil
        return got == 8 ? value : 0
    }

    /// Blocks the calling thread until ``fd`` is readable or `timeoutNanos`
    /// pass (negative: forever); true when readable. Uses poll(2) (timeout
    /// rounded up to whole milliseconds; an `EINTR` restarts the full
    /// timeout), so no CPU is used while waiting. For worker threads — the
    /// loop thread registers ``fd`` with its ``EventLoop`` instead.
    public func wait(timeoutNanos: Int64) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = timeoutNanos < 0 ? -1 : Int32(clamping: (timeoutNanos + 999_999) / 1_000_000)
        let ready = (try? systemCall("poll") { poll(&pfd, 1, ms) }) ?? 0
        return ready > 0
    }
}
