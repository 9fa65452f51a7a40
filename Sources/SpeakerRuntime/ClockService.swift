// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop
import SpeakerPorts

/// The wall-clock seam: when the clock is set (NTP's first sync on a board
/// without an RTC, a manual `date -s`), the core gets `.clockStepped`, which
/// evaluates the schedule at the new time and re-derives its deadline. It
/// performs no effect (one of the `frontEnds` of ``SpeakerServices``).
/// Loop thread only.
public final class ClockService: SpeakerService {
    public let name = "clock"
    private let steps: any WallClockSteps
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private var phase = ServicePhase<LoopRegistration>.idle

    public init(steps: any WallClockSteps, loop: any EventLoopProtocol, logger: Logger) {
        self.steps = steps
        self.loop = loop
        self.logger = logger
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        let registration = loop.addReader(fd: steps.fd) { [unowned self, weak context] in
            guard self.steps.takeStep(), let context else { return }
            self.logger.info("the wall clock was set")
            context.send(.clockStepped(at: context.now()))
        }
        phase = .running(registration)
    }

    public func stop() {
        if case .running(let registration) = phase { loop.remove(registration) }
        phase = .stopped
    }
}
