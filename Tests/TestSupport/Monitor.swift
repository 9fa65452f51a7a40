// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A value guarded by a pthread mutex with a condition variable on the
/// monotonic clock, so a thread can block until the value satisfies a
/// predicate or a timeout passes. Any thread.
///
/// `@unchecked Sendable`: `state` is only read or written with `mutex` held.
public final class Monitor<State>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    /// Creates the monitor holding `initial`.
    public init(_ initial: State) {
        state = initial
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    /// Runs `body` with the lock held and wakes every waiter afterwards.
    @discardableResult
    public func update<R>(_ body: (inout State) -> R) -> R {
        pthread_mutex_lock(mutex)
        let result = body(&state)
        pthread_cond_broadcast(condition)
        pthread_mutex_unlock(mutex)
        return result
    }

    /// Reads the state with the lock held.
    public func read<R>(_ body: (State) -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body(state)
    }

    /// Blocks until `check` returns non-nil (evaluated with the lock held,
    /// after every `update`) or `timeout` seconds pass; returns its value or nil.
    public func wait<R>(timeout: Double, _ check: (inout State) -> R?) -> R? {
        let deadline = Monotonic.nanoseconds() + UInt64(max(0, timeout) * 1e9)
        var until = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let result = check(&state) { return result }
            if pthread_cond_timedwait(condition, mutex, &until) == ETIMEDOUT {
                return check(&state)
            }
        }
    }
}

/// The monotonic clock in nanoseconds.
public enum Monotonic {
    /// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds.
    public static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
