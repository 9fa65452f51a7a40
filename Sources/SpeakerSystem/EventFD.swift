#if canImport(Glibc)
import Glibc
#endif

/// An `eventfd(2)` counter: the way another thread wakes an ``EventLoop``.
///
/// Register ``fd`` with ``EventLoop/addReader(fd:_:)``; other threads call
/// ``signal()``; the handler (on the loop thread) calls ``drain()``.
/// The descriptor is non-blocking and close-on-exec, and closed on deinit.
// @unchecked Sendable: the only stored state is the immutable descriptor;
// write(2)/read(2) on an eventfd are atomic in the kernel.
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
        // Only fails (EAGAIN) when the counter is at 2^64-2: the loop is
        // already guaranteed to wake, so the failure is harmless.
        _ = try? systemCall("write") { write(fd, &one, 8) }
    }

    /// Reads and resets the counter; answers how many signals arrived since
    /// the last drain (0 if none). Call on the loop thread.
    @discardableResult
    public func drain() -> UInt64 {
        var value: UInt64 = 0
        let got = (try? systemCallUnlessWouldBlock("read") { read(fd, &value, 8) }) ?? nil
        return got == 8 ? value : 0
    }
}
