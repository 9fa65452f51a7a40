// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerSystem

/// The UP/DOWN outputs of a step-only amplifier. The GPIO board drives real
/// lines; the simulated board records what it would drive. Loop thread only.
public protocol AmpStepLines: AnyObject {
    /// Drives the UP (`up: true`) or DOWN line to its logical `active` level.
    /// `at` is the monotonic instant (ns) the change was scheduled for.
    func drive(up: Bool, active: Bool, at: UInt64) throws(GPIOError)
}

/// Pulses a step-only amplifier on the event loop: each pulse holds a line
/// active for `pulseMs`, then leaves both inactive for at least `gapMs`
/// before the next. Pending pulses live in an ``AmpStepQueue`` (coalesced,
/// bounded). Both boards use this one schedule, so the simulated board
/// records exactly the pulses the real one would send.
/// Threading: loop thread only (timers of `loop`).
public final class AmpStepper {
    public let pulseMilliseconds: Int
    public let gapMilliseconds: Int
    private let loop: any EventLoopProtocol
    private let lines: AmpStepLines
    private let logger: Logger
    private let onFailure: (GPIOError) -> Void
    private var queue: AmpStepQueue
    private var timer: LoopTimerID?
    /// Pulses dropped by the bound, for the log.
    public private(set) var dropped = 0

    /// `onFailure` is called (once per failed drive) if a line cannot be driven.
    public init(loop: any EventLoopProtocol, lines: AmpStepLines, pulseMilliseconds: Int, gapMilliseconds: Int, maxPending: Int,
                logger: Logger, onFailure: @escaping (GPIOError) -> Void) {
        self.loop = loop
        self.lines = lines
        self.pulseMilliseconds = max(1, pulseMilliseconds)
        self.gapMilliseconds = max(1, gapMilliseconds)
        self.queue = AmpStepQueue(maxPending: maxPending)
        self.logger = logger
        self.onFailure = onFailure
        logger.info("amp stepper: pulse \(self.pulseMilliseconds) ms, gap \(self.gapMilliseconds) ms, at most \(queue.maxPending) pending (coalesced)")
    }

    /// Net pulses waiting (positive UP, negative DOWN), not counting one in flight.
    public var pending: Int { queue.pending }
    /// True while a pulse or its gap is running.
    public var isBusy: Bool { timer != nil }

    /// Queues `pulse`; starts pulsing if idle.
    public func enqueue(_ pulse: AmpPulse) {
        let lost = queue.add(pulse)
        if lost > 0 {
            dropped += lost
            logger.debug("amp stepper: \(lost) pulse(s) dropped, \(queue.maxPending) already pending")
        }
        if timer == nil { startNext() }
    }

    /// Cancels the schedule and leaves both lines inactive.
    public func stop() {
        if let timer { loop.cancel(timer) }
        timer = nil
        queue = AmpStepQueue(maxPending: queue.maxPending)
        let now = loop.now()
        try? lines.drive(up: true, active: false, at: now)
        try? lines.drive(up: false, active: false, at: now)
    }

    private func startNext() {
        guard let up = queue.take() else { timer = nil; return }
        // Idle means the previous gap has ended (its timer started us), so start now.
        let start = loop.now()
        do throws(GPIOError) {
            try lines.drive(up: up, active: true, at: start)
        } catch {
            timer = nil
            onFailure(error)
            return
        }
        // Timed from when the line is actually active (the set call may be slow
        // on a loaded machine), so the pulse is never shorter than pulseMs.
        let activeAt = loop.now()
        let end = activeAt + UInt64(pulseMilliseconds) * 1_000_000
        logger.debug("\(up ? "UP" : "DOWN") active at \(activeAt / 1000) µs")
        timer = loop.schedule(at: end) { [unowned self] in
            self.logger.debug("\(up ? "UP" : "DOWN") inactive at \(self.loop.now() / 1000) µs (due \(end / 1000))")
            do throws(GPIOError) {
                try self.lines.drive(up: up, active: false, at: end)
            } catch {
                self.timer = nil
                self.onFailure(error)
                return
            }
            self.timer = self.loop.schedule(after: self.gapMilliseconds) { [unowned self] in
                self.timer = nil
                self.startNext()
            }
        }
    }
}
