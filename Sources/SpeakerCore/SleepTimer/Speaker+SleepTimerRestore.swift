// SPDX-License-Identifier: Apache-2.0
/// A sleep timer across a restart, a kill -9 or a power cut.
///
/// The state file keeps the timer's end by the wall clock and whether that
/// clock was synchronised. On `.start`:
/// - both then and now synchronised: the time left is measured against the
///   wall clock. Still running: playback resumes (when `session.resumeOnBoot`
///   resumes it) with the timer's time left, its fade starting over from the
///   level if it was under way. Passed while the speaker was down: the timer
///   is over and playback does not resume — a sound machine must not start
///   in the night because the power came back.
/// - either clock unsynchronised (a Pi without an RTC after a power cut):
///   how long the speaker was down cannot be known, so the timer counts as
///   ended and playback does not resume, for the same reason.
extension Speaker {
    /// The snapshot's timer: the running one as the state file keeps it.
    var persistedSleepTimer: PersistedSleepTimer? {
        state.sleepTimer.running.map {
            PersistedSleepTimer(endsAt: $0.endsAtWall, minutes: $0.minutes, fadeSeconds: $0.fadeSeconds, clockSynced: $0.wallSynced)
        }
    }

    /// Before playback resumes at `.start`: decides what the restored timer
    /// means. Returns the time left in ms when it still runs.
    mutating func decideRestoredSleepTimer() -> (effects: [SpeakerEffect], remainingMs: Int64?) {
        guard let saved = state.sleepTimer.restored else { return ([], nil) }
        state.sleepTimer.restored = nil
        guard state.persistence.resumeAtStart else {
            return ([.log(.info, "sleep timer from before the restart dropped: playback does not resume")], nil)
        }
        let wall = environment.wallClock()
        let synced = environment.clockSynced()
        let leftMs = (saved.endsAt.seconds - wall.seconds) * 1000 + Int64(saved.endsAt.milliseconds - wall.milliseconds)
        guard saved.clockSynced && synced else {
            state.persistence.resumeAtStart = false
            return ([.log(.notice, "sleep timer from before the restart: the wall clock is not synchronised, so the "
                          + "time it was down is unknown; the timer counts as ended and playback does not resume")], nil)
        }
        guard leftMs > 0, leftMs <= Int64(saved.minutes) * 60_000 else {
            state.persistence.resumeAtStart = false
            return ([.log(.info, "sleep timer ended while the speaker was down (at \(saved.endsAt.iso8601)); "
                          + "playback does not resume")], nil)
        }
        return ([.log(.info, "sleep timer resumes with \(leftMs / 1000) s left")], leftMs)
    }

    /// After playback resumed at `.start`: the restored timer runs on with its time left.
    mutating func resumeSleepTimer(remainingMs: Int64, saved: PersistedSleepTimer, at now: MonotonicInstant) -> [SpeakerEffect] {
        guard state.transport.session.intendsPlayback else { return [] }
        state.sleepTimer.running = SleepTimerState.Running(
            minutes: saved.minutes, fadeSeconds: saved.fadeSeconds, endsAt: now.advanced(byMilliseconds: Int(remainingMs)),
            endsAtWall: saved.endsAt, wallSynced: saved.clockSynced)
        return advanceSleepTimer(to: now)
    }

    /// `.start`'s part: the restored timer decided, playback resumed (or
    /// not), then the timer resumed.
    mutating func resumeRestoredStateAndSleepTimer(at now: MonotonicInstant) -> [SpeakerEffect] {
        let saved = state.sleepTimer.restored
        let (decided, remainingMs) = decideRestoredSleepTimer()
        var effects = resumeRestoredState(at: now) + decided
        if let remainingMs, let saved { effects += resumeSleepTimer(remainingMs: remainingMs, saved: saved, at: now) }
        return effects
    }
}
