import SpeakerProtocol

extension Speaker {
    /// Rounds a level to 4 decimals so repeated steps publish `0.45`, not `0.45000000000000007`.
    static func tidy(_ level: Double) -> Double { (level * 10_000).rounded() / 10_000 }

    /// Sets an absolute level, clamped to [0, maxLevel]. Unsupported on
    /// step-only hardware, where no level exists.
    mutating func setVolume(_ requested: Double, origin: PendingCommand?) -> ApplyOutcome {
        guard case .absolute = state.volume else {
            return .rejected(.unsupported, "this speaker's volume is step-only (relative); use volumeUp/volumeDown")
        }
        let level = Self.tidy(min(max(requested, 0), config.volume.maxLevel))
        return applyLevel(level, origin: origin)
    }

    /// Moves the volume by `steps` (knob detents after acceleration, or a
    /// command's steps): a level change on absolute hardware, amp pulses on
    /// step-only hardware.
    mutating func stepVolume(by steps: Int, origin: PendingCommand? = nil) -> ApplyOutcome {
        guard steps != 0 else { return .done(level: nil) }
        switch state.volume {
        case .absolute(let current):
            let level = Self.tidy(min(max(current + Double(steps) * config.volume.step, 0), config.volume.maxLevel))
            return applyLevel(level, origin: origin)
        case .relative:
            effects.append(.amp(steps > 0 ? .up(count: steps) : .down(count: -steps)))
            return .done(level: nil)
        }
    }

    /// Moves the absolute level. Software gain cannot fail: the level is the
    /// speaker's at once. An ALSA mixer write can: it is asked for with a
    /// ticket and the level becomes the speaker's (published, answered `ok`)
    /// only when `levelSet` confirms it (`handleLevelReport`).
    private mutating func applyLevel(_ level: Double, origin: PendingCommand?) -> ApplyOutcome {
        guard case .absolute(let current) = state.volume, current != level else { return .done(level: level) }
        guard config.volume.mode == .alsaMixer else {
            state.volume = .absolute(level: level)
            effects.append(.audio(.setLevel(level)))
            return .done(level: level)
        }
        requestMixerLevel(level, origin: origin)
        return .awaitingEngine
    }

    /// Asks for a mixer write with a fresh ticket.
    mutating func requestMixerLevel(_ level: Double, origin: PendingCommand?) {
        let ticket = state.nextTicket
        state.nextTicket += 1
        state.pendingLevels[ticket] = PendingLevel(level: level, origin: origin)
        effects.append(.audio(.setMixerLevel(level, ticket: ticket)))
    }

    /// The answer to a `setMixerLevel`: on success the level is the speaker's
    /// and the command's result waits for the publication that shows it; on
    /// failure the command is answered `audio-unavailable`, nothing invented
    /// is published, and the level read back from the element is taken as
    /// the truth (published if it differs from what was published).
    mutating func handleLevelReport(ticket: UInt64, failure: (reason: String, actual: Double?)?) {
        guard let pending = state.pendingLevels.removeValue(forKey: ticket) else { return }
        guard let failure else {
            if case .absolute = state.volume { state.volume = .absolute(level: pending.level) }
            if let origin = pending.origin { resultsAwaitingPublish.append((origin, level: pending.level)) }
            return
        }
        effects.append(.log(.error, "volume: the mixer did not take level \(pending.level): \(failure.reason)"))
        if let actual = failure.actual, actual.isFinite, case .absolute = state.volume {
            state.volume = .absolute(level: Self.tidy(min(max(actual, 0), 1)))
        }
        if let origin = pending.origin {
            finish(.rejected(CommandRejection(id: origin.id, code: .audioUnavailable,
                                              message: "the mixer did not take level \(pending.level): \(failure.reason)")),
                   for: origin)
        }
    }
}
