// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

extension TransportState {
    /// Applies a transport command from MQTT (`origin` set) or a button
    /// (`origin` nil). A rejected command changes nothing.
    mutating func apply(_ command: TransportCommand, origin: PendingCommand?, tickets: inout EngineTickets,
                        context: TransportContext, at now: MonotonicInstant) -> TransportStep {
        var step = TransportStep()
        switch command {
        case .play: step.outcome = play(origin: origin, tickets: &tickets, context, &step.effects)
        case .pause: step.outcome = pause(origin: origin, tickets: &tickets, context, at: now, &step.effects)
        case .toggle:
            step.outcome = session.intendsPlayback
                ? pause(origin: origin, tickets: &tickets, context, at: now, &step.effects)
                : play(origin: origin, tickets: &tickets, context, &step.effects)
        case .stop: step.outcome = stop(origin: origin, tickets: &tickets, context, &step.effects)
        case .next:
            step.outcome = select(index: (selectedIndex + 1) % catalog.count, origin: origin, tickets: &tickets, context,
                                  &step.effects)
        case .previous:
            step.outcome = select(index: (selectedIndex + catalog.count - 1) % catalog.count, origin: origin,
                                  tickets: &tickets, context, &step.effects)
        case .select(let soundID):
            guard let index = catalog.firstIndex(where: { $0.id == soundID }) else {
                step.outcome = .rejected(.unknownSound, "no sound \"\(soundID)\" in the catalog")
                return step
            }
            if index == selectedIndex && session.intendsPlayback { return step }
            step.outcome = select(index: index, origin: origin, tickets: &tickets, context, &step.effects)
        }
        return step
    }

    /// Ends a paused session whose idle timeout has passed.
    mutating func endIfIdle(at now: MonotonicInstant, timeoutSeconds: Int) -> [SpeakerEffect] {
        guard let deadline = idleDeadline(timeoutSeconds: timeoutSeconds), deadline <= now else { return [] }
        let log = SpeakerEffect.log(.info, "session \(session.id ?? "-") ended after \(timeoutSeconds) s paused")
        endSession()
        return [log]
    }

    /// Applies an engine report about playback. Reports are cumulative: the
    /// engine handles requests in order, so a report for ticket T also
    /// completes every earlier outstanding ticket (a pause overtaken by a
    /// play never reports).
    mutating func handle(_ report: EngineReport, tickets: inout EngineTickets, context: TransportContext) -> TransportStep {
        var step = TransportStep()
        switch report {
        case .playing(let ticket), .paused(let ticket):
            if case .playing = report { session.isPlaying = true } else { session.isPlaying = false }
            step.completed = complete { $0 <= ticket }
        case .unavailable(let reason):
            step.effects.append(.log(.warning, "audio output unavailable: \(reason)"))
            audio = .unavailable
            session.isPlaying = false
            step.completed = complete { _ in true }
        case .available:
            let wasUnavailable = audio == .unavailable
            audio = .ok
            if wasUnavailable && session.intendsPlayback {
                step.effects.append(.log(.info, "audio output is back; resuming playback"))
                let sound = selectedSound.id
                request({ .play(soundID: sound, fadeMs: context.fadeMs, ticket: $0) }, origin: nil, tickets: &tickets,
                        &step.effects)
            }
        case .underruns(let total):
            underruns = total
        case let .noSource(soundID, reason, fadeMs, ticket):
            // The engine resumes what it has (or plays silence) and still
            // answers the ticket, so the core never waits forever.
            step.effects.append(.log(.error, "sound \"\(soundID)\" \(reason)"))
            step.effects.append(.audio(.resume(fadeMs: fadeMs, ticket: ticket)))
        case .levelSet, .levelFailed, .mixerReading, .mixLayers, .longFadeDone:
            break  // the volume, mixes, sleep timer and schedule domains'
        }
        return step
    }

    /// The selected entry changed in place (a mix saved again with other
    /// sounds): while playback is intended, the engine crossfades to it.
    mutating func reloadSelected(origin: PendingCommand?, tickets: inout EngineTickets, context: TransportContext) -> TransportStep {
        var step = TransportStep()
        guard session.intendsPlayback, audio == .ok else { return step }
        let sound = selectedSound.id
        request({ .switchTo(soundID: sound, crossfadeMs: context.crossfadeMs, ticket: $0) }, origin: origin,
                tickets: &tickets, &step.effects)
        step.outcome = .awaitingEngine
        return step
    }

    /// Ends the session: `ended: true` is published with the last attributes.
    mutating func endSession() {
        session.isActive = false
        session.intendsPlayback = false
        session.pausedSince = nil
    }

    /// Removes the outstanding tickets that `isDone` says are complete, in
    /// ticket order, returning the commands that asked for them.
    private mutating func complete(_ isDone: (UInt64) -> Bool) -> [PendingCommand] {
        var completed: [PendingCommand] = []
        for ticket in outstanding.keys.sorted() where isDone(ticket) {
            if let origin = outstanding.removeValue(forKey: ticket) ?? nil { completed.append(origin) }
        }
        return completed
    }

    /// Starts a session if none is active (fresh opaque id).
    private mutating func beginSessionIfNeeded(_ context: TransportContext, _ effects: inout [SpeakerEffect]) {
        guard !session.isActive else { return }
        session.id = context.newSessionID()
        session.isActive = true
        effects.append(.log(.info, "session \(session.id ?? "-") started"))
    }

    /// Issues an engine request with a fresh ticket, remembering who asked.
    private mutating func request(_ make: (UInt64) -> AudioRequest, origin: PendingCommand?, tickets: inout EngineTickets,
                                  _ effects: inout [SpeakerEffect]) {
        let ticket = tickets.issue()
        outstanding[ticket] = .some(origin)
        effects.append(.audio(make(ticket)))
    }

    private mutating func play(origin: PendingCommand?, tickets: inout EngineTickets, _ context: TransportContext,
                               _ effects: inout [SpeakerEffect]) -> ApplyOutcome {
        guard audio == .ok else { return .rejected(.audioUnavailable, "the audio output is unavailable") }
        if session.intendsPlayback && session.isPlaying && outstanding.isEmpty { return .done(level: nil) }
        beginSessionIfNeeded(context, &effects)
        session.intendsPlayback = true
        session.pausedSince = nil
        let sound = selectedSound.id
        request({ .play(soundID: sound, fadeMs: context.fadeMs, ticket: $0) }, origin: origin, tickets: &tickets, &effects)
        return .awaitingEngine
    }

    private mutating func pause(origin: PendingCommand?, tickets: inout EngineTickets, _ context: TransportContext,
                                at now: MonotonicInstant, _ effects: inout [SpeakerEffect]) -> ApplyOutcome {
        guard session.intendsPlayback || session.isPlaying else { return .done(level: nil) }
        session.intendsPlayback = false
        session.pausedSince = now
        request({ .pause(fadeMs: context.fadeMs, ticket: $0) }, origin: origin, tickets: &tickets, &effects)
        return .awaitingEngine
    }

    private mutating func stop(origin: PendingCommand?, tickets: inout EngineTickets, _ context: TransportContext,
                               _ effects: inout [SpeakerEffect]) -> ApplyOutcome {
        guard session.isActive || session.isPlaying else { return .done(level: nil) }
        let wasAudible = session.intendsPlayback || session.isPlaying
        endSession()
        guard wasAudible else { return .done(level: nil) }
        request({ .pause(fadeMs: context.fadeMs, ticket: $0) }, origin: origin, tickets: &tickets, &effects)
        return .awaitingEngine
    }

    /// Selects a sound and plays it: a crossfade when playback is intended, else a fade-in.
    private mutating func select(index: Int, origin: PendingCommand?, tickets: inout EngineTickets,
                                 _ context: TransportContext, _ effects: inout [SpeakerEffect]) -> ApplyOutcome {
        guard audio == .ok else { return .rejected(.audioUnavailable, "the audio output is unavailable") }
        let wasIntended = session.intendsPlayback
        beginSessionIfNeeded(context, &effects)
        selectedIndex = index
        session.intendsPlayback = true
        session.pausedSince = nil
        let sound = selectedSound.id
        if wasIntended {
            request({ .switchTo(soundID: sound, crossfadeMs: context.crossfadeMs, ticket: $0) }, origin: origin,
                    tickets: &tickets, &effects)
        } else {
            request({ .play(soundID: sound, fadeMs: context.fadeMs, ticket: $0) }, origin: origin, tickets: &tickets, &effects)
        }
        return .awaitingEngine
    }
}
