// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

extension VolumeControlState {
    /// Applies a volume command from MQTT, the knob (`origin` nil) or a
    /// reload's new maximum. A rejected command changes nothing.
    mutating func apply(_ command: VolumeCommand, origin: PendingCommand?, tickets: inout EngineTickets,
                        config: VolumeSection) -> VolumeStep {
        var step = VolumeStep()
        switch command {
        case .set(let requested):
            guard case .absolute = level else {
                step.outcome = .rejected(.unsupported, "this speaker's volume is step-only (relative); use volumeUp/volumeDown")
                return step
            }
            let target = Self.tidy(min(max(requested, 0), config.maxLevel))
            step.outcome = applyLevel(target, origin: origin, tickets: &tickets, config: config, &step.effects)
        case .step(let steps):
            guard steps != 0 else { return step }
            switch level {
            case .absolute(let current):
                let target = Self.tidy(min(max(current + Double(steps) * config.step, 0), config.maxLevel))
                step.outcome = applyLevel(target, origin: origin, tickets: &tickets, config: config, &step.effects)
            case .relative:
                step.effects.append(.amp(steps > 0 ? .up(count: steps) : .down(count: -steps)))
            }
        }
        return step
    }

    /// The level at start: the software gain, or (`alsa-mixer`) unity gain
    /// and a mixer write of the level. Nothing on step-only hardware.
    mutating func start(tickets: inout EngineTickets, config: VolumeSection) -> [SpeakerEffect] {
        guard case .absolute(let current) = level else { return [] }
        guard config.mode == .alsaMixer else { return [.audio(.setLevel(current))] }
        // The mixer element carries the level; the software gain stays at unity.
        var effects: [SpeakerEffect] = [.audio(.setLevel(1))]
        requestMixerLevel(current, origin: nil, tickets: &tickets, &effects)
        return effects
    }

    /// Applies an engine report about the level: a mixer write's answer, or
    /// a reading of the element.
    mutating func handle(_ report: EngineReport, tickets: inout EngineTickets, config: VolumeSection) -> VolumeStep {
        var step = VolumeStep()
        switch report {
        case .levelSet(let ticket):
            guard let pending = pendingLevels.removeValue(forKey: ticket) else { break }
            if case .absolute = level { level = .absolute(level: pending.level) }
            step.completed = pending.origin.map { AwaitingResult(origin: $0, level: pending.level) }
        case let .levelFailed(ticket, reason, actual):
            // Nothing invented is published: the level read back from the
            // element is taken as the truth, and the command is refused.
            guard let pending = pendingLevels.removeValue(forKey: ticket) else { break }
            step.effects.append(.log(.error, "volume: the mixer did not take level \(pending.level): \(reason)"))
            if let actual, actual.isFinite, case .absolute = level {
                level = .absolute(level: Self.tidy(min(max(actual, 0), 1)))
            }
            step.refused = pending.origin.map { ($0, "the mixer did not take level \(pending.level): \(reason)") }
        case let .mixerReading(db, reported, ownWrite):
            let last = lastMixerReading
            lastMixerReading = MixerReading(db: db)
            // The element notifies every change, the speaker's own writes too:
            // only a reading that differs from the last one was made elsewhere.
            guard !ownWrite, !(last?.matches(db) ?? false) else { break }
            step.effects.append(.log(.info, "volume: mixer moved elsewhere to \(db.map { "\($0) dB" } ?? "mute") (level \(reported))"))
            adoptOutsideLevel(reported, tickets: &tickets, config: config, &step.effects)
        case .playing, .paused, .unavailable, .available, .underruns, .noSource, .mixLayers, .longFadeDone:
            break  // the transport domain's
        }
        return step
    }

    /// Moves the absolute level. Software gain cannot fail: the level is the
    /// speaker's at once. An ALSA mixer write can: it is asked for with a
    /// ticket and the level becomes the speaker's (published, answered `ok`)
    /// only when `levelSet` confirms it.
    private mutating func applyLevel(_ target: Double, origin: PendingCommand?, tickets: inout EngineTickets,
                                     config: VolumeSection, _ effects: inout [SpeakerEffect]) -> ApplyOutcome {
        guard case .absolute(let current) = level, current != target else { return .done(level: target) }
        guard config.mode == .alsaMixer else {
            level = .absolute(level: target)
            effects.append(.audio(.setLevel(target)))
            return .done(level: target)
        }
        requestMixerLevel(target, origin: origin, tickets: &tickets, &effects)
        return .awaitingEngine
    }

    /// Takes over a level set on the mixer element outside the speaker. It is
    /// published like any other change; one above `volume.maxLevel` is
    /// written back down to it (the element is at `reported` until that
    /// write is confirmed).
    private mutating func adoptOutsideLevel(_ reported: Double, tickets: inout EngineTickets, config: VolumeSection,
                                            _ effects: inout [SpeakerEffect]) {
        guard case .absolute(let current) = level, reported.isFinite else { return }
        let limited = Self.tidy(min(max(reported, 0), config.maxLevel))
        if limited < reported {
            effects.append(.log(.notice, "volume set to \(reported) outside the speaker; limited to maxLevel \(limited)"))
            level = .absolute(level: Self.tidy(min(max(reported, 0), 1)))
            requestMixerLevel(limited, origin: nil, tickets: &tickets, &effects)
            return
        }
        if limited != current { level = .absolute(level: limited) }
    }

    /// Asks for a mixer write with a fresh ticket.
    private mutating func requestMixerLevel(_ target: Double, origin: PendingCommand?, tickets: inout EngineTickets,
                                            _ effects: inout [SpeakerEffect]) {
        let ticket = tickets.issue()
        pendingLevels[ticket] = PendingLevel(level: target, origin: origin)
        effects.append(.audio(.setMixerLevel(target, ticket: ticket)))
    }
}
