// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Linux-only C functions that the Swift `Glibc` module does not import
/// (`<sys/timerfd.h>`, `<sys/eventfd.h>`, `<sys/signalfd.h>`, `<sys/random.h>`),
/// reached through the `CSystemShim` headers. One value type so call sites
/// name the exact C function they use. Immutable; any thread.
struct LinuxCalls: Sendable {
    static let timerAbsolute = Int32(TFD_TIMER_ABSTIME)
    static let timerCancelOnSet = Int32(TFD_TIMER_CANCEL_ON_SET)
    static let randomNonBlocking = UInt32(GRND_NONBLOCK)
    static let signalInfoSize = MemoryLayout<signalfd_siginfo>.size

    /// `int timerfd_create(int clockid, int flags)`
    func timerfdCreate(_ clock: Int32, _ flags: Int32) -> Int32 { timerfd_create(clock, flags) }
    /// `int timerfd_settime(int fd, int flags, const struct itimerspec *new, struct itimerspec *old)`
    func timerfdSettime(_ fd: Int32, _ flags: Int32, _ new: UnsafePointer<itimerspec>?,
                        _ old: UnsafeMutablePointer<itimerspec>?) -> Int32 {
        timerfd_settime(fd, flags, new, old)
    }
    /// `int eventfd(unsigned int initval, int flags)`
    func eventfd(_ initial: UInt32, _ flags: Int32) -> Int32 { CSystemShim.eventfd(initial, flags) }
    /// `int signalfd(int fd, const sigset_t *mask, int flags)`
    func signalfd(_ fd: Int32, _ mask: UnsafePointer<sigset_t>, _ flags: Int32) -> Int32 { CSystemShim.signalfd(fd, mask, flags) }
    /// `ssize_t getrandom(void *buf, size_t buflen, unsigned int flags)`
    func getrandom(_ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: UInt32) -> Int {
        CSystemShim.getrandom(buffer, count, flags)
    }

    /// The functions (kept throwing for call sites written against a loader).
    static func shared() throws(SystemError) -> LinuxCalls { LinuxCalls() }
}
