// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Notices the wall clock being set (NTP's step at boot, `date -s`, a
/// resumed VM): a `timerfd` on CLOCK_REALTIME armed far in the future with
/// `TFD_TIMER_CANCEL_ON_SET`, which the kernel cancels — making the
/// descriptor readable and its `read` fail with `ECANCELED` — whenever the
/// clock is set discontinuously. Gradual NTP slewing does not trigger it.
/// Loop thread only; closed on deinit.
// @unchecked Sendable: the only stored state is the immutable descriptor and the call table.
public final class ClockStepTimer: @unchecked Sendable {
    /// The descriptor to poll for readability.
    public let fd: Int32
    private let calls: LinuxCalls

    /// Creates and arms the timer (`timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC)`).
    public init() throws(SystemError) {
        let calls = try LinuxCalls.shared()
        self.calls = calls
        fd = try systemCall("timerfd_create") { calls.timerfdCreate(CLOCK_REALTIME, O_NONBLOCK | O_CLOEXEC) }
        do { try arm() } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Arms the timer at an absolute instant ten years from now
    /// (`timerfd_settime(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)`).
    private func arm() throws(SystemError) {
        let now = WallClock.now().seconds
        var spec = itimerspec(it_interval: timespec(tv_sec: 0, tv_nsec: 0),
                              it_value: timespec(tv_sec: Int(now) + 10 * 365 * 86_400, tv_nsec: 0))
        let calls = calls, fd = fd
        _ = try systemCall("timerfd_settime") {
            calls.timerfdSettime(fd, LinuxCalls.timerAbsolute | LinuxCalls.timerCancelOnSet, &spec, nil)
        }
    }

    /// After the descriptor became readable: true when the clock was set
    /// (the read failed with `ECANCELED`); the timer is armed again either way.
    public func takeStep() -> Bool {
        var expirations: UInt64 = 0
        let fd = fd
        let stepped: Bool
        do {
            _ = try systemCallUnlessWouldBlock("read") { read(fd, &expirations, 8) }
            stepped = false
        } catch {
            stepped = error.errno == ECANCELED
        }
        do { try arm() } catch { return stepped }
        return stepped
    }
}
