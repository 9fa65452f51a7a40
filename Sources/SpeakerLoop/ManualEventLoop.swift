// SPDX-License-Identifier: Apache-2.0
/// The manual-time twin of ``EventLoop`` (as NIO's `EmbeddedEventLoop`):
/// nothing happens by itself. Time moves only in ``advanceTime(byMilliseconds:)``
/// / ``advanceTime(to:)``, which fire the timers that fall due in deadline
/// order (FIFO on ties, including timers their handlers schedule within the
/// advanced span, each seeing ``now()`` at its own deadline); a reader runs when
/// the test calls ``readable(fd:)``; a signal's handler when it calls
/// ``raise(_:)``. For tests of everything that runs on a loop. One thread.
public final class ManualEventLoop: EventLoopProtocol {
    private struct Timer {
        var deadline: UInt64
        var id: UInt64
        var handler: () -> Void
    }

    private var current: UInt64
    private var timers: [Timer] = []
    private var readers: [UInt64: (fd: Int32, handler: () -> Void)] = [:]
    private var signalHandlers: [Int32: (Int32) -> Void] = [:]
    private var nextID: UInt64 = 1
    /// How many times ``stop()`` was called (the runtime stops its loop on
    /// SIGTERM or a hardware failure; a test checks that it asked).
    public private(set) var stopCount = 0

    /// Starts the clock at `start` nanoseconds (not 0, like a real boot clock).
    public init(start: UInt64 = 1_000_000_000) { current = start }

    public func now() -> UInt64 { current }

    @discardableResult
    public func schedule(at deadline: UInt64, _ handler: @escaping () -> Void) -> LoopTimerID {
        let id = takeID()
        let index = timers.firstIndex { $0.deadline > deadline } ?? timers.count
        timers.insert(Timer(deadline: deadline, id: id, handler: handler), at: index)
        return LoopTimerID(id: id)
    }

    public func cancel(_ timer: LoopTimerID) { timers.removeAll { $0.id == timer.id } }

    @discardableResult
    public func addReader(fd: Int32, _ handler: @escaping () -> Void) -> LoopRegistration {
        let id = takeID()
        readers[id] = (fd, handler)
        return LoopRegistration(id: id, fd: fd)
    }

    public func remove(_ registration: LoopRegistration) { readers[registration.id] = nil }

    public func onSignal(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) {
        for signal in signals { signalHandlers[signal] = handler }
    }

    public func stop() { stopCount += 1 }

    // MARK: Driving it

    /// The earliest pending deadline, if any.
    public var nextDeadline: UInt64? { timers.first?.deadline }
    /// Timers not yet fired.
    public var pendingTimers: Int { timers.count }
    /// Descriptors with a reader registered.
    public var watchedDescriptors: [Int32] { readers.values.map(\.fd).sorted() }

    /// Fires the timers due now (deadline ≤ ``now()``), in order.
    public func runDueTimers() { advanceTime(to: current) }

    /// Moves the clock forward by `milliseconds`, firing every timer that falls due on the way.
    public func advanceTime(byMilliseconds milliseconds: Int) {
        advanceTime(to: current &+ UInt64(max(0, milliseconds)) &* 1_000_000)
    }

    /// Moves the clock to `instant` (never backwards), firing every timer due by then.
    public func advanceTime(to instant: UInt64) {
        while let first = timers.first, first.deadline <= instant {
            timers.removeFirst()
            current = max(current, first.deadline)
            first.handler()
        }
        current = max(current, instant)
    }

    /// Runs every reader registered on `fd` (the descriptor became readable);
    /// returns how many ran.
    @discardableResult
    public func readable(fd: Int32) -> Int {
        let due = readers.filter { $0.value.fd == fd }.sorted { $0.key < $1.key }
        for (id, reader) in due where readers[id] != nil { reader.handler() }
        return due.count
    }

    /// Delivers `signal` to its handler; false when none is installed.
    @discardableResult
    public func raise(_ signal: Int32) -> Bool {
        guard let handler = signalHandlers[signal] else { return false }
        handler(signal)
        return true
    }

    private func takeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }
}
