// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop

/// The NTP-sync seam: the kernel's sync flag changes with no event to wait
/// for (NTP may slew the clock into sync without stepping it), so this
/// service reads it every ``intervalMs`` and tells the core only when it
/// changed (`.clockSyncChanged`). The core then evaluates the schedule with
/// the new flag; between changes it sleeps until its own next deadline
/// instead of waking on a timer of its own, so an idle speaker runs only
/// this one read, not the core's evaluation and publishing path.
/// One of the `frontEnds` of ``SpeakerServices``; it performs no effect.
/// Loop thread only.
public final class ClockSyncWatch: SpeakerService {
    public let name = "clock-sync"
    /// How long a change of the flag may go unnoticed (the wait a schedule
    /// or night cap has after a slewed first sync; a step is reported at
    /// once by ``ClockService``).
    public static let intervalMs: UInt64 = 30_000

    private struct Watching {
        var synced: Bool
        var timer: LoopTimerID
    }

    private let read: () -> Bool
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private var phase = ServicePhase<Watching>.idle

    /// `read` answers the core's own question (live: the environment's
    /// `clockSynced`, so both see the same flag).
    public init(read: @escaping () -> Bool, loop: any EventLoopProtocol, logger: Logger) {
        self.read = read
        self.loop = loop
        self.logger = logger
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        phase = .running(Watching(synced: read(), timer: next(context)))
    }

    public func stop() {
        if case .running(let watching) = phase { loop.cancel(watching.timer) }
        phase = .stopped
    }

    private func next(_ context: ServiceContext) -> LoopTimerID {
        loop.schedule(at: loop.now() + Self.intervalMs * 1_000_000) { [weak self, weak context] in
            guard let self, let context else { return }
            self.check(context)
        }
    }

    private func check(_ context: ServiceContext) {
        guard case .running(var watching) = phase else { return }
        let synced = read()
        watching.timer = next(context)
        if synced != watching.synced {
            watching.synced = synced
            logger.debug("the clock is \(synced ? "now" : "no longer") NTP-synchronised")
            context.send(.clockSyncChanged(at: context.now()))
        }
        phase = .running(watching)
    }
}
