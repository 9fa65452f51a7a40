// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// The replaying twin of ``RecordingGPIOLines``: serves the answers of a
/// recorded ``GPIOTrace`` in order and checks that each call is the one
/// recorded (same operation, same lines and settings), noting every
/// difference in ``mismatches``. The reader's descriptor is an eventfd of its
/// own that never becomes readable by itself: ``play(on:)`` moves a
/// ``ManualEventLoop`` to each recorded take's time and runs the board's
/// reader there, so a board recorded on gpio-sim runs again exactly, on
/// manual time. Loop thread only.
public final class ReplayedGPIOLines: GPIOLineAccess {
    public let library: GPIOLibrary
    private var entries: ArraySlice<GPIOTraceEntry>
    private let ready: EventFD
    /// Each call that differed from the trace (or came after its end), in order.
    public private(set) var mismatches: [String] = []

    /// Serves `trace` (its `library` entry answers ``library``).
    public init(trace: GPIOTrace) throws(SystemError) {
        var library = GPIOLibrary(description: "libgpiod (replayed)", hasKernelDebounce: false, eventQueueSize: 16)
        for case .library(let l) in trace.entries { library = l }
        self.library = library
        entries = ArraySlice(trace.entries.filter { if case .library = $0 { return false } else { return true } })
        ready = try EventFD()
    }

    /// Whether every recorded call has been made.
    public var isFinished: Bool { entries.isEmpty }

    /// The loop times of the takes not yet served.
    public var remainingTakes: [UInt64] { entries.compactMap { if case .take(let at, _) = $0 { return at } else { return nil } } }

    /// Replays the reader's wake-ups: for each recorded take, moves `loop` to
    /// its time (firing the timers due on the way) and runs the reader there.
    public func play(on loop: ManualEventLoop) {
        for at in remainingTakes {
            loop.advanceTime(to: at)
            if loop.readable(fd: ready.fd) == 0 { mismatches.append("take at \(at): no reader registered") }
        }
    }

    public func locate(_ names: [String], directory: String) throws(GPIOError) -> [String: GPIOLineLocation] {
        let call = "locate \(names) in \(directory)"
        guard case let .locate(n, d, result)? = next(call), n == names, d == directory else { throw mismatch(call) }
        return try result.get()
    }

    public func requestInput(_ location: GPIOLineLocation, _ settings: GPIOInputSettings, consumer: String) throws(GPIOError) -> GPIORequestID {
        let call = "input \(location) \(settings)"
        guard case let .requestInput(line, chip, offset, s, result)? = next(call),
              line == location.name, chip == location.chip.name, offset == location.line.offset, s == settings
        else { throw mismatch(call) }
        return try result.get()
    }

    public func requestOutput(_ location: GPIOLineLocation, activeLow: Bool, consumer: String) throws(GPIOError) -> GPIORequestID {
        let call = "output \(location) activeLow \(activeLow)"
        guard case let .requestOutput(line, chip, offset, low, result)? = next(call),
              line == location.name, chip == location.chip.name, offset == location.line.offset, low == activeLow
        else { throw mismatch(call) }
        return try result.get()
    }

    public func startReader(_ inputs: [GPIORequestID]) throws(GPIOError) -> Int32 {
        let call = "reader \(inputs)"
        guard case let .startReader(recorded, error)? = next(call), recorded == inputs else { throw mismatch(call) }
        if let error { throw error }
        return ready.fd
    }

    public func takeReads() -> EdgeReads {
        guard case .take(_, let taken)? = next("take") else {
            mismatches.append("take: not the recorded call")
            return EdgeReads(reads: [], realtime: nil)
        }
        return taken
    }

    public func stopReader() {
        guard case .stopReader? = next("stop") else { return mismatches.append("stop: not the recorded call") }
    }

    public func setOutput(_ request: GPIORequestID, active: Bool) -> Int32? {
        let call = "set \(request) \(active)"
        guard case let .setOutput(r, a, _, e)? = next(call), r == request, a == active else {
            mismatches.append("\(call): not the recorded call")
            return EPROTO
        }
        return e
    }

    public func release(_ request: GPIORequestID) {
        guard case .release(let r)? = next("release \(request)"), r == request else {
            return mismatches.append("release \(request): not the recorded call")
        }
    }

    /// The next recorded entry, or nil (noted) past the end.
    private func next(_ call: String) -> GPIOTraceEntry? {
        guard let entry = entries.popFirst() else {
            mismatches.append("\(call): after the end of the trace")
            return nil
        }
        return entry
    }

    private func mismatch(_ call: String) -> GPIOError {
        mismatches.append("\(call): not the recorded call")
        return .reader(errno: EPROTO)
    }
}
