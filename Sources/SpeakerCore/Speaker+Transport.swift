import SpeakerProtocol

/// What applying a command did.
enum ApplyOutcome: Equatable {
    /// Done (or nothing to do); `level` is the level a volume command applied.
    case done(level: Double?)
    /// Handed to the engine; the result follows its report.
    case awaitingEngine
    case rejected(CommandErrorCode, String)
}

extension Speaker {
    /// Applies a well-formed command from MQTT (`origin` set) or from a button
    /// (`origin` nil). A rejected command changes nothing.
    mutating func apply(_ command: Command, origin: PendingCommand?, at now: MonotonicInstant) -> ApplyOutcome {
        switch command {
        case .play: return play(origin: origin)
        case .pause: return pause(origin: origin, at: now)
        case .toggle: return state.session.intendsPlayback ? pause(origin: origin, at: now) : play(origin: origin)
        case .stop: return stop(origin: origin)
        case .next: return select(index: (state.selectedIndex + 1) % state.catalog.count, origin: origin)
        case .previous:
            return select(index: (state.selectedIndex + state.catalog.count - 1) % state.catalog.count, origin: origin)
        case .select(let soundID):
            guard let index = state.catalog.firstIndex(where: { $0.id == soundID }) else {
                return .rejected(.unknownSound, "no sound \"\(soundID)\" in the catalog")
            }
            if index == state.selectedIndex && state.session.intendsPlayback { return .done(level: nil) }
            return select(index: index, origin: origin)
        case .setVolume(let level): return setVolume(level, origin: origin)
        case .volumeUp(let steps): return stepVolume(by: steps, origin: origin)
        case .volumeDown(let steps): return stepVolume(by: -steps, origin: origin)
        }
    }

    /// Starts a session if none is active (fresh opaque id).
    private mutating func beginSessionIfNeeded() {
        guard !state.session.isActive else { return }
        state.session.id = environment.newSessionID()
        state.session.isActive = true
        effects.append(.log(.info, "session \(state.session.id ?? "-") started"))
    }

    /// Issues an engine request with a fresh ticket, remembering who asked.
    private mutating func request(_ make: (UInt64) -> AudioRequest, origin: PendingCommand?) {
        let ticket = state.nextTicket
        state.nextTicket += 1
        state.outstanding[ticket] = .some(origin)
        effects.append(.audio(make(ticket)))
    }

    private mutating func play(origin: PendingCommand?) -> ApplyOutcome {
        guard state.audio == .ok else { return .rejected(.audioUnavailable, "the audio output is unavailable") }
        if state.session.intendsPlayback && state.session.isPlaying && state.outstanding.isEmpty { return .done(level: nil) }
        beginSessionIfNeeded()
        state.session.intendsPlayback = true
        state.session.pausedSince = nil
        let sound = state.selectedSound.id
        let fade = config.audio.fadeMs
        request({ .play(soundID: sound, fadeMs: fade, ticket: $0) }, origin: origin)
        return .awaitingEngine
    }

    private mutating func pause(origin: PendingCommand?, at now: MonotonicInstant) -> ApplyOutcome {
        guard state.session.intendsPlayback || state.session.isPlaying else { return .done(level: nil) }
        state.session.intendsPlayback = false
        state.session.pausedSince = now
        let fade = config.audio.fadeMs
        request({ .pause(fadeMs: fade, ticket: $0) }, origin: origin)
        return .awaitingEngine
    }

    private mutating func stop(origin: PendingCommand?) -> ApplyOutcome {
        guard state.session.isActive || state.session.isPlaying else { return .done(level: nil) }
        let wasAudible = state.session.intendsPlayback || state.session.isPlaying
        endSession()
        guard wasAudible else { return .done(level: nil) }
        let fade = config.audio.fadeMs
        request({ .pause(fadeMs: fade, ticket: $0) }, origin: origin)
        return .awaitingEngine
    }

    /// Selects a sound and plays it: a crossfade when playback is intended, else a fade-in.
    private mutating func select(index: Int, origin: PendingCommand?) -> ApplyOutcome {
        guard state.audio == .ok else { return .rejected(.audioUnavailable, "the audio output is unavailable") }
        let wasIntended = state.session.intendsPlayback
        beginSessionIfNeeded()
        state.selectedIndex = index
        state.session.intendsPlayback = true
        state.session.pausedSince = nil
        let sound = state.selectedSound.id
        if wasIntended {
            let ms = config.audio.crossfadeMs
            request({ .switchTo(soundID: sound, crossfadeMs: ms, ticket: $0) }, origin: origin)
        } else {
            let ms = config.audio.fadeMs
            request({ .play(soundID: sound, fadeMs: ms, ticket: $0) }, origin: origin)
        }
        return .awaitingEngine
    }

    /// Ends the session: `ended: true` is published with the last attributes.
    mutating func endSession() {
        state.session.isActive = false
        state.session.intendsPlayback = false
        state.session.pausedSince = nil
    }

    /// When a paused session ends by itself.
    var idleDeadline: MonotonicInstant? {
        guard state.session.isActive, !state.session.intendsPlayback, let since = state.session.pausedSince else { return nil }
        return since.advanced(byMilliseconds: config.session.idleTimeoutSeconds * 1000)
    }

    /// Applies an engine report. Reports are cumulative: the engine handles
    /// requests in order, so a report for ticket T also completes every
    /// earlier outstanding ticket (a pause overtaken by a play never reports).
    mutating func handleEngineReport(_ report: EngineReport, at now: MonotonicInstant) {
        switch report {
        case .playing(let ticket), .paused(let ticket):
            if case .playing = report { state.session.isPlaying = true } else { state.session.isPlaying = false }
            for t in state.outstanding.keys.sorted() where t <= ticket {
                if let origin = state.outstanding.removeValue(forKey: t) ?? nil {
                    resultsAwaitingPublish.append((origin, level: nil))
                }
            }
        case .unavailable(let reason):
            effects.append(.log(.warning, "audio output unavailable: \(reason)"))
            state.audio = .unavailable
            state.session.isPlaying = false
            for t in state.outstanding.keys.sorted() {
                if let origin = state.outstanding.removeValue(forKey: t) ?? nil {
                    resultsAwaitingPublish.append((origin, level: nil))
                }
            }
        case .available:
            let wasUnavailable = state.audio == .unavailable
            state.audio = .ok
            if wasUnavailable && state.session.intendsPlayback {
                effects.append(.log(.info, "audio output is back; resuming playback"))
                let sound = state.selectedSound.id
                let fade = config.audio.fadeMs
                request({ .play(soundID: sound, fadeMs: fade, ticket: $0) }, origin: nil)
            }
        case .underruns(let total):
            state.underruns = total
        case .levelChangedOutside(let level):
            adoptOutsideLevel(level)
        case .levelSet(let ticket):
            handleLevelReport(ticket: ticket, failure: nil)
        case let .levelFailed(ticket, reason, actual):
            handleLevelReport(ticket: ticket, failure: (reason, actual))
        case let .noSource(soundID, reason, fadeMs, ticket):
            // The engine resumes what it has (or plays silence) and still
            // answers the ticket, so the core never waits forever.
            effects.append(.log(.error, "sound \"\(soundID)\" \(reason)"))
            effects.append(.audio(.resume(fadeMs: fadeMs, ticket: ticket)))
        case let .mixerReading(db, level, ownWrite):
            let last = state.lastMixerReading
            state.lastMixerReading = MixerReading(db: db)
            // The element notifies every change, the speaker's own writes too:
            // only a reading that differs from the last one was made elsewhere.
            guard !ownWrite, !(last?.matches(db) ?? false) else { break }
            effects.append(.log(.info, "volume: mixer moved elsewhere to \(db.map { "\($0) dB" } ?? "mute") (level \(level))"))
            adoptOutsideLevel(level)
        }
    }
}
