#if canImport(Glibc)
import Glibc
#endif

/// Linux-only C functions that the Swift `Glibc` module does not import
/// (`<sys/timerfd.h>`, `<sys/eventfd.h>`, `<sys/signalfd.h>`, `<sys/random.h>`).
///
/// The package has no C shim target for SpeakerSystem, so they are resolved
/// once from the already-loaded C library with `dlsym(3)` and called through
/// `@convention(c)` pointers of their exact C prototypes. Immutable after
/// loading, so safe from any thread.
struct LinuxCalls: Sendable {
    // Constants from the kernel headers (same values on every Linux architecture).
    static let timerAbsolute: Int32 = 1            // TFD_TIMER_ABSTIME
    static let randomNonBlocking: UInt32 = 1       // GRND_NONBLOCK
    static let signalInfoSize = 128                // sizeof(struct signalfd_siginfo)

    /// `int timerfd_create(int clockid, int flags)`
    let timerfdCreate: @convention(c) (Int32, Int32) -> Int32
    /// `int timerfd_settime(int fd, int flags, const struct itimerspec *new, struct itimerspec *old)`
    let timerfdSettime: @convention(c) (Int32, Int32, UnsafePointer<itimerspec>?, UnsafeMutablePointer<itimerspec>?) -> Int32
    /// `int eventfd(unsigned int initval, int flags)`
    let eventfd: @convention(c) (UInt32, Int32) -> Int32
    /// `int signalfd(int fd, const sigset_t *mask, int flags)`
    let signalfd: @convention(c) (Int32, UnsafePointer<sigset_t>?, Int32) -> Int32
    /// `ssize_t getrandom(void *buf, size_t buflen, unsigned int flags)`
    let getrandom: @convention(c) (UnsafeMutableRawPointer?, Int, UInt32) -> Int

    /// The functions, resolved on first use; throws `ENOSYS` naming the
    /// missing symbol if the C library lacks one.
    static func shared() throws(SystemError) -> LinuxCalls {
        switch loaded {
        case .success(let calls): return calls
        case .failure(let error): throw error
        }
    }

    // Immutable, lazily initialised once by the runtime (thread-safe `let`).
    private static let loaded: Result<LinuxCalls, SystemError> = load()

    private static func load() -> Result<LinuxCalls, SystemError> {
        guard let handle = dlopen(nil, RTLD_NOW) else {
            return .failure(SystemError(operation: "dlopen", errno: ENOSYS))
        }
        func symbol<F>(_ name: String, as type: F.Type) throws(SystemError) -> F {
            guard let pointer = dlsym(handle, name) else {
                throw SystemError(operation: "dlsym \(name)", errno: ENOSYS)
            }
            return unsafeBitCast(pointer, to: type)
        }
        do throws(SystemError) {
            return .success(LinuxCalls(
                timerfdCreate: try symbol("timerfd_create", as: (@convention(c) (Int32, Int32) -> Int32).self),
                timerfdSettime: try symbol("timerfd_settime", as: (@convention(c) (Int32, Int32, UnsafePointer<itimerspec>?, UnsafeMutablePointer<itimerspec>?) -> Int32).self),
                eventfd: try symbol("eventfd", as: (@convention(c) (UInt32, Int32) -> Int32).self),
                signalfd: try symbol("signalfd", as: (@convention(c) (Int32, UnsafePointer<sigset_t>?, Int32) -> Int32).self),
                getrandom: try symbol("getrandom", as: (@convention(c) (UnsafeMutableRawPointer?, Int, UInt32) -> Int).self)))
        } catch {
            return .failure(error)
        }
    }
}
