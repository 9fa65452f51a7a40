// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// An `epoll(7)` set: one descriptor that is readable while any member is,
/// so a loop polls one fd for several sources (the MQTT link's mailbox,
/// keepalive timer and broker socket). Members are watched for input, and
/// for output too when asked.
///
/// Each call is one `epoll_ctl`/`epoll_create1` through the
/// ``systemCall(_:path:_:)`` funnel; the kernel makes them safe from any
/// thread. The descriptor is close-on-exec and closed on deinit.
// @unchecked Sendable: the only stored state is the immutable descriptor;
// epoll_ctl(2) on one set from several threads is serialised by the kernel.
public final class EpollSet: @unchecked Sendable {
    /// The descriptor to poll for readability.
    public let fd: Int32

    /// Creates an empty set (`epoll_create1(EPOLL_CLOEXEC)`).
    public init() throws(SystemError) {
        fd = try systemCall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    deinit { close(fd) }

    /// Watches `member` for input, and for output too when `output` is set;
    /// updates a member's events, or adds it (`epoll_ctl` `EPOLL_CTL_MOD`,
    /// then `EPOLL_CTL_ADD` when it is not a member yet).
    public func watch(_ member: Int32, output: Bool = false) throws(SystemError) {
        let set = fd
        do throws(SystemError) {
            _ = try systemCall("epoll_ctl") { csys_epoll_ctl(set, EPOLL_CTL_MOD, member, output ? 1 : 0) }
        } catch {
            guard error.errno == ENOENT else { throw error }
            _ = try systemCall("epoll_ctl") { csys_epoll_ctl(set, EPOLL_CTL_ADD, member, output ? 1 : 0) }
        }
    }

    /// Stops watching `member` (`epoll_ctl` `EPOLL_CTL_DEL`); a no-op when it
    /// is not a member (or already closed, which removed it).
    public func forget(_ member: Int32) {
        let set = fd
        _ = try? systemCall("epoll_ctl") { csys_epoll_ctl(set, EPOLL_CTL_DEL, member, 0) }
    }
}

/// A periodic `timerfd` on CLOCK_MONOTONIC, non-blocking and close-on-exec:
/// readable once it has fired, until ``takeExpirations()`` reads it. Each
/// call is one system call through the ``systemCall(_:path:_:)`` funnel;
/// any thread. Closed on deinit.
// @unchecked Sendable: the only stored state is the immutable descriptor.
public final class PeriodicTimerFD: @unchecked Sendable {
    /// The descriptor to poll for readability.
    public let fd: Int32
    private let calls: LinuxCalls

    /// Creates a disarmed timer (`timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC)`).
    public init() throws(SystemError) {
        let calls = try LinuxCalls.shared()
        self.calls = calls
        fd = try systemCall("timerfd_create") { calls.timerfdCreate(CLOCK_MONOTONIC, O_NONBLOCK | O_CLOEXEC) }
    }

    deinit { close(fd) }

    /// Fires every `milliseconds` from now, or never for 0 (`timerfd_settime`, relative).
    public func fire(everyMilliseconds milliseconds: Int) throws(SystemError) {
        let period = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var spec = itimerspec(it_interval: period, it_value: period)
        let calls = calls, fd = fd
        _ = try systemCall("timerfd_settime") { calls.timerfdSettime(fd, 0, &spec, nil) }
    }

    /// Reads and resets the expiration count (`read`): how often the timer
    /// fired since the last call, 0 when it has not (or on failure).
    public func takeExpirations() -> UInt64 {
        var expirations: UInt64 = 0
        let fd = fd
        let got = (try? systemCallUnlessWouldBlock("read") { read(fd, &expirations, 8) }) ?? nil
        return got == 8 ? expirations : 0
    }
}
