// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerSystem

/// The status LED's output line. The GPIO board drives a real line; the
/// simulated board records the levels. Loop thread only.
public protocol StatusLedLines: AnyObject {
    /// Drives the LED line to lit (`true`) or dark; `at` is the monotonic
    /// instant (ns) the change was scheduled for.
    func driveLed(lit: Bool, at: UInt64) throws(GPIOError)
}

/// Plays a ``StatusLedPattern`` on the LED line with the event loop's timers
/// (a timerfd: no sleeping, no polling): a steady level at once, or the
/// pattern's lit/dark spans one after the other (after its dark lead-in),
/// repeating for a repeating pattern and ending dark for a one-shot one. A
/// new pattern replaces the one under way at once. Both boards use this one schedule, so the
/// simulated board records exactly the levels the real line would show.
/// Threading: loop thread only.
public final class StatusLedDriver {
    private let loop: any EventLoopProtocol
    private let lines: StatusLedLines
    private let onFailure: (GPIOError) -> Void
    private var timer: LoopTimerID?
    /// The pattern being shown.
    public private(set) var pattern: StatusLedPattern?

    /// `onFailure` is called (once per failed drive) if the line cannot be driven.
    public init(loop: any EventLoopProtocol, lines: StatusLedLines, onFailure: @escaping (GPIOError) -> Void) {
        self.loop = loop
        self.lines = lines
        self.onFailure = onFailure
    }

    /// Shows `pattern` from now on.
    public func show(_ pattern: StatusLedPattern) {
        if let timer { loop.cancel(timer) }
        timer = nil
        self.pattern = pattern
        let spans = pattern.spansMs
        guard !spans.isEmpty else {
            drive(pattern.isLit, at: loop.now())
            return
        }
        let repeats = pattern.durationMs == nil, now = loop.now()
        guard pattern.leadInMs > 0 else {
            run(spans, index: 0, repeats: repeats, at: now)
            return
        }
        guard drive(false, at: now) else { return }
        let start = now + UInt64(pattern.leadInMs) * 1_000_000
        timer = loop.schedule(at: start) { [unowned self] in
            self.run(spans, index: 0, repeats: repeats, at: start)
        }
    }

    /// Leaves the LED dark and stops the schedule.
    public func stop() {
        if let timer { loop.cancel(timer) }
        timer = nil
        pattern = nil
        try? lines.driveLed(lit: false, at: loop.now())
    }

    /// Span `index` starts at `start` (lit for even indices), timed from its
    /// scheduled instant so a late wake-up does not stretch the pattern.
    private func run(_ spans: [Int], index: Int, repeats: Bool, at start: UInt64) {
        guard index < spans.count || repeats else {
            drive(false, at: start)
            timer = nil
            return
        }
        let i = index % spans.count
        guard drive(i % 2 == 0, at: start) else { return }
        let end = start + UInt64(spans[i]) * 1_000_000
        timer = loop.schedule(at: end) { [unowned self] in
            self.run(spans, index: i + 1 == spans.count && repeats ? 0 : index + 1, repeats: repeats, at: end)
        }
    }

    @discardableResult
    private func drive(_ lit: Bool, at: UInt64) -> Bool {
        do throws(GPIOError) {
            try lines.driveLed(lit: lit, at: at)
            return true
        } catch {
            timer = nil
            onFailure(error)
            return false
        }
    }
}
