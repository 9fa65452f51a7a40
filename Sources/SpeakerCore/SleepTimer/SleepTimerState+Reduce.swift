// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What advancing the sleep timer did: its effects, and whether it ran out.
struct SleepTimerStep {
    var effects: [SpeakerEffect] = []
    /// The timer reached `endsAt` (the parent pauses and publishes the event).
    var ended = false
}

extension SleepTimerState {
    /// Starts a timer of `minutes` with a fade of `fadeSeconds` (already
    /// clamped to the length), replacing any running one; a fade under way
    /// ramps back first. The fade's start, if due now, follows with `advance`.
    mutating func set(minutes: Int, fadeSeconds: Int, at now: MonotonicInstant, wallNow: WallClockReading,
                      clockSynced: Bool, tickets: inout EngineTickets) -> [SpeakerEffect] {
        let effects = rampBack(tickets: &tickets)
        let lengthMs = Int64(minutes) * 60_000
        let wallMs = Int64(wallNow.milliseconds) + lengthMs
        running = Running(minutes: minutes, fadeSeconds: fadeSeconds, endsAt: now.advanced(byMilliseconds: Int(lengthMs)),
                          endsAtWall: WallClockReading(seconds: wallNow.seconds + wallMs / 1000, milliseconds: Int(wallMs % 1000)),
                          wallSynced: clockSynced)
        return effects
    }

    /// Cancels the timer. `rampBack`: a fade under way (or finished) ramps
    /// back to the level now (a knob turn, a press, `cancelSleepTimer`);
    /// false when a pause is what cancels it (the multiplier is reset once
    /// the pause has completed, `engineSettled`, so the pause's own fade-out
    /// is not lifted by it).
    mutating func cancel(rampBack ramp: Bool, tickets: inout EngineTickets) -> [SpeakerEffect] {
        running = nil
        return ramp ? rampBack(tickets: &tickets) : []
    }

    /// Runs the timer's deadlines up to `now`: the fade's start (the long
    /// fade to 0 over the time left) and the end.
    mutating func advance(to now: MonotonicInstant, tickets: inout EngineTickets) -> SleepTimerStep {
        self.now = now
        var step = SleepTimerStep()
        guard var timer = running else { return step }
        if !timer.fading && timer.fadeStartsAt <= now && now < timer.endsAt {
            timer.fading = true
            running = timer
            multiplierLowered = true
            let overMs = Int(timer.endsAt.nanoseconds(since: now) / 1_000_000)
            step.effects.append(.audio(.longFade(to: 0, overMs: overMs, ticket: tickets.issue())))
            step.effects.append(.log(.info, "sleep timer: fading out over \(overMs / 1000) s"))
        }
        if timer.endsAt <= now {
            running = nil
            step.ended = true
            step.effects.append(.log(.info, "sleep timer: \(timer.minutes) min ended"))
        }
        return step
    }

    /// The engine reported the transport's state. Paused with the multiplier
    /// lowered and no fade under way: it returns to 1 at once (silent now,
    /// so the next play starts at the level). Playing with it lowered and no
    /// fade under way (a play overtook the pause): it ramps back.
    mutating func engineSettled(playing: Bool, tickets: inout EngineTickets) -> [SpeakerEffect] {
        guard multiplierLowered, running?.fading != true else { return [] }
        if playing { return rampBack(tickets: &tickets) }
        multiplierLowered = false
        return [.audio(.longFade(to: 1, overMs: 0, ticket: tickets.issue()))]
    }

    /// A long fade this domain asked for is done; nothing waits for it (the
    /// timer's end is kept by the core's clock, so a stalled engine cannot hold it).
    func longFadeDone(ticket: UInt64) -> [SpeakerEffect] { [] }

    /// Ramps a lowered multiplier back to 1.
    private mutating func rampBack(tickets: inout EngineTickets) -> [SpeakerEffect] {
        guard multiplierLowered else { return [] }
        multiplierLowered = false
        if var timer = running { timer.fading = false; running = timer }
        return [.audio(.longFade(to: 1, overMs: Self.rampBackMs, ticket: tickets.issue()))]
    }
}
