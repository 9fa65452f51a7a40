import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, close-on-exec `eventfd(2)` used to wake the other side of a
/// queue. `signal()` and `drain()` are single syscalls that never allocate, so
/// the audio thread may call them. Owned by `AudioEngine`, which closes it.
struct WakeupFD: Sendable {
    let fd: Int32

    /// Creates the eventfd (`eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`).
    static func make(device: String) throws(ALSAError) -> WakeupFD {
        let fd = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        if fd < 0 { throw ALSAError(device: device, function: "eventfd", code: -errno) }
        return WakeupFD(fd: fd)
    }

    /// Makes `fd` readable (adds one to the counter). Any thread.
    func signal() {
        var one: UInt64 = 1
        while write(fd, &one, 8) < 0 && errno == EINTR {}
    }

    /// Resets the counter so `fd` is no longer readable. The reading side only.
    func drain() {
        var value: UInt64 = 0
        while read(fd, &value, 8) < 0 && errno == EINTR {}
    }

    /// Waits until `fd` is readable or `timeoutNanos` pass (negative: forever).
    /// Returns true when readable. Uses poll(2) (timeout rounded up to whole
    /// milliseconds), so no CPU is used while waiting.
    func wait(timeoutNanos: Int64) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ms = timeoutNanos < 0 ? -1 : Int32(clamping: (timeoutNanos + 999_999) / 1_000_000)
        while true {
            let rc = poll(&pfd, 1, ms)
            if rc < 0 && errno == EINTR { continue }  // approximate: restarts the full timeout
            return rc > 0
        }
    }

    /// Closes the descriptor. Call once, from the owner, after both sides stopped.
    func close() { _ = Glibc.close(fd) }
}
