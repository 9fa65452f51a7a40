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

    private let read: () -> Bool
    private let loop: any EventLoopProtocol
    private var phase = ServicePhase<LoopTimerID>.idle

    /// `read` answers the core's own question (live: the environment's
    /// `clockSynced`, so both see the same flag).
    public init(read: @escaping () -> Bool, loop: any EventLoopProtocol) {
        self.read = read
        self.loop = loop
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        phase = .running(next(context))
    }

    public func stop() {
        if case .running(let timer) = phase { loop.cancel(timer) }
        phase = .stopped
    }

    private func next(_ context: ServiceContext) -> LoopTimerID {
        loop.schedule(at: loop.now() + Self.intervalMs * 1_000_000) { [weak self, weak context] in
            guard let self, let context else { return }
            self.check(context)
        }
    }

    /// Compares with the flag the core last evaluated with (its
    /// `schedule.synced`), so a change the core already took (at a step)
    /// is not reported again; the core logs the change.
    private func check(_ context: ServiceContext) {
        guard case .running = phase else { return }
        phase = .running(next(context))
        if read() != context.state.schedule.synced { context.send(.clockSyncChanged(at: context.now())) }
    }
}
