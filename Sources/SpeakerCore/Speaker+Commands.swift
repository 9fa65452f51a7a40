// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// Commands and engine reports across the domains: which child a command
/// or report reaches, and what its outcome means for the results.
extension Speaker {
    /// Handles one `command` payload: the ledger decides what it is; a
    /// command to apply is refused while `session` is withheld, else applied;
    /// exactly one `command/result` goes out (now, or after the engine has
    /// done it and the change is published).
    /// `receivedAtMs`: when it arrived by the wall clock (a command the last
    /// process held); nil: now. A command to apply is held (journaled) until
    /// its result is sent; while stopping it is only held, for the next process.
    mutating func handleCommand(_ incoming: IncomingCommand, at now: MonotonicInstant,
                                receivedAtMs: Int64? = nil) -> [SpeakerEffect] {
        let transport = state.transport, volume = state.volume, publishing = state.publishing, ledger = state.commands
        let inProgress = { (id: String) -> Bool in
            transport.outstanding.values.contains { $0?.id == id }
                || publishing.resultsAwaitingPublish.contains { $0.origin.id == id }
                || volume.pendingLevels.values.contains { $0.origin?.id == id }
                || ledger.holds(id)
        }
        switch state.commands.intake(incoming, policy: ResponseTopicPolicy(config: config), topics: topics,
                                     inProgress: inProgress) {
        case .settled(let effects):
            return effects
        case let .apply(envelope, origin):
            guard state.commands.canHold else {
                return state.commands.refuse(envelope, code: .expired, message: "not applied: the speaker already holds "
                                             + "\(CommandJournal.maxHeld) unanswered commands", origin: origin, topics: topics)
            }
            let received = receivedAtMs ?? wallClockMs
            if state.commands.stopping {
                state.commands.hold(incoming, origin: origin, receivedAtMs: received, applied: false)
                return [.log(.debug, "command \(envelope.id) held for the next start (stopping)")]
            }
            if let (code, message) = state.publishing.withheldRejection {
                return state.commands.refuse(envelope, code: code, message: message, origin: origin, topics: topics)
            }
            state.commands.hold(incoming, origin: origin, receivedAtMs: received, applied: true)
            var (outcome, effects) = apply(envelope.command, origin: origin, at: now)
            switch outcome {
            case .done(let level):
                state.publishing.resultsAwaitingPublish.append(AwaitingResult(origin: origin, level: level))
            case .sleepTimerSet(let fade):
                state.publishing.resultsAwaitingPublish.append(AwaitingResult(origin: origin, level: nil, fadeSeconds: fade))
            case .awaitingEngine:
                break
            case let .rejected(code, message):
                effects += state.commands.refuse(envelope, code: code, message: message, origin: origin, topics: topics)
            }
            return effects
        }
    }

    /// Applies a well-formed command from MQTT (`origin` set) or from a button
    /// (`origin` nil) in the domain it belongs to. A rejected command changes nothing.
    mutating func apply(_ command: Command, origin: PendingCommand?, at now: MonotonicInstant)
        -> (outcome: ApplyOutcome, effects: [SpeakerEffect]) {
        var (outcome, effects) = applyCommand(command, origin: origin, at: now)
        if case .rejected = outcome {} else if command.cancelsScheduleFade { effects = cancelScheduleFade() + effects }
        return (outcome, effects)
    }

    private mutating func applyCommand(_ command: Command, origin: PendingCommand?, at now: MonotonicInstant)
        -> (outcome: ApplyOutcome, effects: [SpeakerEffect]) {
        let transportCommand: TransportCommand
        switch command {
        case .play: transportCommand = .play
        case .pause: transportCommand = .pause
        case .toggle: transportCommand = .toggle
        case .stop: transportCommand = .stop
        case .next: transportCommand = .next
        case .previous: transportCommand = .previous
        case .select(let soundID): transportCommand = .select(soundID: soundID)
        case .setVolume(let level): return applyVolume(.set(level), origin: origin)
        case .volumeUp(let steps): return applyVolume(.step(steps), origin: origin)
        case .volumeDown(let steps): return applyVolume(.step(-steps), origin: origin)
        case .setSleepTimer, .cancelSleepTimer, .mute, .unmute: return applySleepTimerOrMute(command, at: now)
        case .setSchedules, .setScheduleEnabled, .setNightCap: return applyScheduleCommand(command, at: now)
        case .saveMix(let mix): return applyMix(.save(mix), origin: origin, at: now)
        case .deleteMix(let mixID): return applyMix(.delete(mixID: mixID), origin: origin, at: now)
        case let .setLayerLevel(soundID, level): return applyMix(.setLevel(soundID: soundID, level: level), origin: origin, at: now)
        }
        let before = state.transport.selectedSound.id
        let step = state.transport.apply(transportCommand, origin: origin, tickets: &state.tickets,
                                         context: transportContext, at: now)
        selectionMoved(from: before)
        return (step.outcome, step.effects + sleepTimerAfterTransport())
    }

    /// Applies a volume command.
    mutating func applyVolume(_ command: VolumeCommand, origin: PendingCommand?)
        -> (outcome: ApplyOutcome, effects: [SpeakerEffect]) {
        let step = state.volume.apply(command, origin: origin, tickets: &state.tickets, config: cappedVolume)
        return (step.outcome, step.effects)
    }

    /// An engine report reaches the domain it is about; the commands it
    /// completes wait for the publication that shows their change, one it
    /// refuses is answered now.
    mutating func handleEngineReport(_ report: EngineReport, at now: MonotonicInstant) -> [SpeakerEffect] {
        switch report {
        case .playing, .paused, .unavailable, .available, .underruns, .noSource:
            let step = state.transport.handle(report, tickets: &state.tickets, context: transportContext)
            state.publishing.resultsAwaitingPublish += step.completed.map { AwaitingResult(origin: $0, level: nil) }
            var effects = step.effects
            if state.transport.outstanding.isEmpty {
                switch report {
                case .playing: effects += state.sleepTimer.engineSettled(playing: true, tickets: &state.tickets)
                case .paused, .unavailable: effects += state.sleepTimer.engineSettled(playing: false, tickets: &state.tickets)
                default: break
                }
            }
            return effects
        case let .mixLayers(mixID, dropped):
            return handleMixLayers(mixID: mixID, dropped: dropped)
        case .levelSet, .levelFailed, .mixerReading:
            let step = state.volume.handle(report, tickets: &state.tickets, config: cappedVolume)
            var effects = step.effects
            if let completed = step.completed { state.publishing.resultsAwaitingPublish.append(completed) }
            if let (origin, message) = step.refused {
                let rejection = CommandRejection(id: origin.id, code: .audioUnavailable, message: message)
                effects += state.commands.finish(.rejected(rejection), for: origin, topics)
            }
            return effects
        case .longFadeDone(let ticket):
            return scheduleFadeDone(ticket: ticket, at: now) ?? state.sleepTimer.longFadeDone(ticket: ticket)
        }
    }

    /// What the transport domain takes from the configuration and the environment.
    var transportContext: TransportContext {
        TransportContext(fadeMs: config.audio.fadeMs, crossfadeMs: config.audio.crossfadeMs,
                         newSessionID: environment.newSessionID)
    }
}
