// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A single-threaded event loop driven only by file-descriptor readiness
/// (`poll(2)`): readers and writers on descriptors, timers on one `timerfd`
/// (CLOCK_MONOTONIC, absolute, re-armed to the earliest deadline) and signals
/// through a `signalfd`.
///
/// Threading: create it anywhere, then use it only from the thread that calls
/// ``run()`` (handlers run there too). Other threads wake it through an
/// ``EventFD`` registered with ``addReader(fd:_:)``.
///
/// Handlers may add/remove registrations, schedule/cancel timers and call
/// ``stop()`` re-entrantly.
public final class EventLoop: EventLoopProtocol {
    public typealias Registration = LoopRegistration
    public typealias TimerID = LoopTimerID

    private struct Watch {
        var fd: Int32
        var events: Int16
        var handler: () -> Void
    }

    private struct Timer {
        var deadline: UInt64
        var id: UInt64
        var handler: () -> Void
    }

    private let calls: LinuxCalls
    private let timerFD: Int32
    private var signalFD: Int32 = -1
    private var signalMask = sigset_t()
    private var signalHandlers: [Int32: (Int32) -> Void] = [:]
    private var watches: [UInt64: Watch] = [:]
    /// Pending timers, sorted by (deadline, id): earliest first, FIFO on ties.
    private var timers: [Timer] = []
    private var armedDeadline: UInt64 = 0
    private var nextID: UInt64 = 1
    private var stopRequested = false
    /// True while ``run()`` is on the stack.
    public private(set) var isRunning = false

    /// Creates the loop and its timerfd. Any thread; then use from one.
    public init() throws(SystemError) {
        calls = try LinuxCalls.shared()
        let calls = calls
        timerFD = try systemCall("timerfd_create") { calls.timerfdCreate(CLOCK_MONOTONIC, O_NONBLOCK | O_CLOEXEC) }
        sigemptyset(&signalMask)
    }

    deinit {
        close(timerFD)
        if signalFD >= 0 { close(signalFD) }
    }

    // MARK: Descriptors

    /// Calls `handler` on the loop thread whenever `fd` is readable (or hung
    /// up / in error, so the handler sees EOF or the error on `read`).
    /// The loop does not own `fd`: remove the registration before closing it.
    /// A descriptor closed while registered is dropped automatically (POLLNVAL).
    @discardableResult
    public func addReader(fd: Int32, _ handler: @escaping () -> Void) -> Registration {
        add(fd: fd, events: Int16(POLLIN), handler)
    }

    /// Calls `handler` on the loop thread whenever `fd` is writable; remove
    /// the registration once there is nothing left to write.
    @discardableResult
    public func addWriter(fd: Int32, _ handler: @escaping () -> Void) -> Registration {
        add(fd: fd, events: Int16(POLLOUT), handler)
    }

    /// Stops watching; a no-op if already removed. Safe from a handler.
    public func remove(_ registration: Registration) {
        watches[registration.id] = nil
    }

    private func add(fd: Int32, events: Int16, _ handler: @escaping () -> Void) -> Registration {
        let id = takeID()
        watches[id] = Watch(fd: fd, events: events, handler: handler)
        return Registration(id: id, fd: fd)
    }

    // MARK: Timers

    /// Runs `handler` once on the loop thread at `deadline` (nanoseconds on
    /// ``MonotonicClock``); a deadline in the past fires on the next turn.
    /// Timers with equal deadlines fire in scheduling order.
    @discardableResult
    public func schedule(at deadline: UInt64, _ handler: @escaping () -> Void) -> TimerID {
        let id = takeID()
        let timer = Timer(deadline: deadline, id: id, handler: handler)
        // Binary search for the first timer with a later deadline (FIFO on ties).
        var low = 0, high = timers.count
        while low < high {
            let mid = (low + high) / 2
            if timers[mid].deadline <= deadline { low = mid + 1 } else { high = mid }
        }
        timers.insert(timer, at: low)
        return TimerID(id: id)
    }

    /// The loop's clock: ``MonotonicClock`` (CLOCK_MONOTONIC, the timerfd's clock).
    public func now() -> UInt64 { MonotonicClock.now() }

    /// Cancels a timer that has not fired yet; a no-op otherwise.
    public func cancel(_ timer: TimerID) {
        timers.removeAll { $0.id == timer.id }
    }

    /// The earliest pending deadline, if any (for tests and diagnostics).
    public var nextDeadline: UInt64? { timers.first?.deadline }

    // MARK: Signals

    /// Blocks `signals` for the calling thread (`pthread_sigmask(SIG_BLOCK)`),
    /// so they queue for a `signalfd` instead of running default actions.
    ///
    /// `main` must call this FIRST, before any thread is spawned (threads
    /// inherit the mask), otherwise the kernel may deliver e.g. SIGTERM to a
    /// thread where it is not blocked and kill the process.
    public static func blockSignals(_ signals: [Int32]) throws(SystemError) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        if result != 0 { throw SystemError(operation: "pthread_sigmask", errno: result) }
    }

    /// Calls `handler(signal)` on the loop thread when one of `signals`
    /// arrives, read from a `signalfd`. Also blocks them on the calling thread;
    /// see ``blockSignals(_:)`` for why `main` must block them earlier.
    /// A later call for the same signal replaces its handler.
    public func onSignal(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws(SystemError) {
        try Self.blockSignals(signals)
        for signal in signals {
            sigaddset(&signalMask, signal)
            signalHandlers[signal] = handler
        }
        let calls = calls
        let existing = signalFD
        signalFD = try systemCall("signalfd") {
            calls.signalfd(existing, &signalMask, O_NONBLOCK | O_CLOEXEC)
        }
    }

    // MARK: Running

    /// Dispatches events on the calling thread until ``stop()`` is called.
    /// Throws if `poll`, `timerfd_settime` or a `signalfd` read fails, and
    /// `EBUSY` if called from one of its own handlers (it is not re-entrant).
    public func run() throws(SystemError) {
        guard !isRunning else { throw SystemError(operation: "EventLoop.run (already running)", errno: EBUSY) }
        stopRequested = false
        isRunning = true
        defer { isRunning = false }
        var pollFDs: [pollfd] = []
        var ids: [UInt64] = []
        while !stopRequested {
            try armTimer()
            pollFDs.removeAll(keepingCapacity: true)
            ids.removeAll(keepingCapacity: true)
            pollFDs.append(pollfd(fd: timerFD, events: Int16(POLLIN), revents: 0))
            pollFDs.append(pollfd(fd: signalFD, events: Int16(POLLIN), revents: 0)) // -1 is ignored by poll
            for (id, watch) in watches {
                pollFDs.append(pollfd(fd: watch.fd, events: watch.events, revents: 0))
                ids.append(id)
            }
            let count = pollFDs.count
            _ = try systemCall("poll") {
                pollFDs.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t(count), -1) }
            }
            if pollFDs[0].revents != 0 { try fireDueTimers() }
            if stopRequested { break }
            if pollFDs[1].revents != 0 { try dispatchSignals() }
            for index in ids.indices where !stopRequested {
                let revents = pollFDs[index + 2].revents
                guard revents != 0, let watch = watches[ids[index]] else { continue }
                if revents & Int16(POLLNVAL) != 0 {
                    watches[ids[index]] = nil  // closed while registered: drop, don't spin
                    continue
                }
                watch.handler()
            }
        }
    }

    /// Makes ``run()`` return once the current handler returns (no further
    /// handlers run). Loop thread only, typically from a handler; a stop
    /// requested before ``run()`` starts is cleared by it. Registrations and
    /// pending timers are kept, so ``run()`` can be called again.
    public func stop() {
        stopRequested = true
    }

    private func takeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Arms the timerfd to the earliest deadline (absolute). Only a deadline
    /// earlier than the armed one (or none armed) costs a `timerfd_settime`:
    /// when the earliest timer moved later or went away (the core's deadline
    /// timer, re-scheduled after every dispatch, e.g. for every command),
    /// the armed one is left to fire early — one wake-up that fires nothing
    /// and re-arms — instead of a syscall on every dispatch.
    private func armTimer() throws(SystemError) {
        // Deadline 0 would disarm an absolute timer; 1 ns is already past.
        let wanted = timers.first.map { max($0.deadline, 1) } ?? 0
        guard armedDeadline == 0 || (wanted != 0 && wanted < armedDeadline) else { return }
        guard wanted != armedDeadline else { return }
        var spec = itimerspec()
        spec.it_value.tv_sec = Int(wanted / 1_000_000_000)
        spec.it_value.tv_nsec = Int(wanted % 1_000_000_000)
        let calls = calls
        let fd = timerFD
        _ = try systemCall("timerfd_settime") { calls.timerfdSettime(fd, LinuxCalls.timerAbsolute, &spec, nil) }
        armedDeadline = wanted
    }

    /// Fires the timers due now, strictly in deadline order — including
    /// timers a handler schedules for a deadline that has already passed
    /// (so order holds even when the loop runs late). At most
    /// `maxTimersPerTurn` fire per turn, so a handler that keeps scheduling
    /// into the past cannot starve descriptors.
    private func fireDueTimers() throws(SystemError) {
        var expirations: UInt64 = 0
        let fd = timerFD
        _ = try systemCallUnlessWouldBlock("read") { read(fd, &expirations, 8) }
        armedDeadline = 0  // fired (or stale): re-arm before the next poll
        let now = MonotonicClock.now()
        var fired = 0
        while !stopRequested, fired < Self.maxTimersPerTurn, let first = timers.first, first.deadline <= now {
            timers.removeFirst()
            fired += 1
            first.handler()
        }
    }

    private static let maxTimersPerTurn = 1024

    private func dispatchSignals() throws(SystemError) {
        var info = [UInt8](repeating: 0, count: LinuxCalls.signalInfoSize)
        let fd = signalFD
        while !stopRequested {
            let got = try systemCallUnlessWouldBlock("read") {
                info.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            }
            guard let got, got == LinuxCalls.signalInfoSize else { return }
            // struct signalfd_siginfo starts with `uint32_t ssi_signo`.
            let signal = info.withUnsafeBytes { Int32(bitPattern: $0.load(as: UInt32.self)) }
            signalHandlers[signal]?(signal)
        }
    }
}
