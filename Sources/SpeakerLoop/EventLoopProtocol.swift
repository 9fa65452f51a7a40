// SPDX-License-Identifier: Apache-2.0
/// A reader or writer registration in an event loop, for `remove(_:)`.
public struct LoopRegistration: Hashable, Sendable {
    /// The loop's own number for it.
    public let id: UInt64
    /// The watched descriptor.
    public let fd: Int32

    /// For loop implementations: registration `id` of `fd`.
    public init(id: UInt64, fd: Int32) {
        self.id = id
        self.fd = fd
    }
}

/// A scheduled timer in an event loop, for `cancel(_:)`.
public struct LoopTimerID: Hashable, Sendable {
    /// The loop's own number for it.
    public let id: UInt64

    /// For loop implementations: timer number `id`.
    public init(id: UInt64) { self.id = id }
}

/// What the speaker's code needs from an event loop: the one monotonic clock,
/// timers on it, descriptor readers, signals and `stop()`.
///
/// Two implementations: ``EventLoop`` (poll, timerfd, signalfd, CLOCK_MONOTONIC)
/// runs the daemon; ``ManualEventLoop`` is its manual-time twin, where time
/// moves only when a test calls `advanceTime`, readers fire when the test says
/// a descriptor is readable and signals when it raises them — so everything on
/// a loop (the runtime, boards, the amp stepper) is tested exactly, without
/// sleeps or slack. Loop thread only.
public protocol EventLoopProtocol: AnyObject {
    /// The loop's clock, in nanoseconds: the only monotonic time the speaker's
    /// loop-thread code reads (deadlines, edge timestamps, action instants).
    func now() -> UInt64

    /// Runs `handler` once at `deadline` (nanoseconds on ``now()``'s clock);
    /// a deadline in the past fires on the next turn. Equal deadlines fire in
    /// scheduling order.
    @discardableResult
    func schedule(at deadline: UInt64, _ handler: @escaping () -> Void) -> LoopTimerID

    /// Cancels a timer that has not fired yet; a no-op otherwise.
    func cancel(_ timer: LoopTimerID)

    /// Calls `handler` whenever `fd` is readable (or hung up / in error).
    @discardableResult
    func addReader(fd: Int32, _ handler: @escaping () -> Void) -> LoopRegistration

    /// Stops watching; a no-op if already removed.
    func remove(_ registration: LoopRegistration)

    /// Calls `handler(signal)` on the loop when one of `signals` arrives.
    /// Throws the loop's own error (``EventLoop``: a `SystemError` naming the
    /// failed call); the manual loop never throws.
    func onSignal(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws

    /// Makes the loop's `run()` return once the current handler returns.
    func stop()
}

extension EventLoopProtocol {
    /// Runs `handler` once, `milliseconds` from now.
    @discardableResult
    public func schedule(after milliseconds: Int, _ handler: @escaping () -> Void) -> LoopTimerID {
        schedule(at: now() &+ UInt64(max(0, milliseconds)) &* 1_000_000, handler)
    }
}

/// The signals the speaker handles, by the numbers POSIX fixes for them
/// (`kill -s HUP` is 1, `INT` 2, `TERM` 15), so code that imports no C
/// library can name them. Any thread.
public enum ProcessSignal {
    /// SIGHUP: re-read the configuration.
    public static let hangup: Int32 = 1
    /// SIGINT: stop gracefully (Ctrl-C).
    public static let interrupt: Int32 = 2
    /// SIGTERM: stop gracefully (systemd's stop).
    public static let terminate: Int32 = 15
}
