// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The speaker's behaviour: the one owner of all state.
///
/// `reduce(_:)` takes an action (an input edge, a command payload, an engine
/// report, a tick) and returns the effects for the adapters to perform, in
/// order. It never performs I/O and never reads a clock: time arrives with
/// the actions and the rest through `SpeakerEnvironment`. Use it from one
/// thread (the main loop).
///
/// The state is one child per domain (`SpeakerState`), each with its own
/// reducer that returns its effects: transport and session
/// (`TransportState+Reduce`), volume and mixer (`VolumeControlState+Reduce`),
/// revisions and publishing (`PublishingState`), commands and their results
/// (`CommandLedger`), the broker and Home Assistant (`LinkState`), inputs
/// (`InputState`) and persistence (`Speaker+Persistence`). This type composes
/// them: which child an action reaches, in which order, and what one child's
/// outcome means for another.
public struct Speaker: Sendable {
    public internal(set) var state: SpeakerState
    /// The running configuration (live keys change on `.reconfigure`): `state.config`.
    public internal(set) var config: SpeakerConfig {
        get { state.config }
        set { state.config = newValue }
    }
    let environment: SpeakerEnvironment
    /// This speaker's topics, built once (the topic root changes only with a restart).
    let topics: SpeakerTopics

    /// - Parameters:
    ///   - catalog: the sounds in playback order (at least one).
    ///   - revisionReservation: the last durably reserved revision (0 on a fresh device).
    ///   - epoch: the id of the revision counter's run (`device.epoch`, see `RevisionCounter.epoch`).
    ///   - restored: the persisted state loaded from `stateDirectory` (nil: defaults).
    ///   - savedMixes: the mixes saved over MQTT, loaded from `stateDirectory` (nil: none).
    ///   - artwork: the image files found for the catalog's sounds, as read (the core takes or refuses each).
    ///   - journal: the command journal the last process left (nil: none, or set aside as unusable).
    public init(config: SpeakerConfig, catalog: [CatalogEntry], environment: SpeakerEnvironment,
                revisionReservation: UInt64, epoch: String, restored: PersistedState? = nil, savedMixes: SavedMixes? = nil,
                artwork: [ArtworkFile] = [], journal: CommandJournal? = nil) {
        self.init(config: config, catalog: catalog, environment: environment,
                  revisions: RevisionCounter(persistedReservation: revisionReservation, epoch: epoch), restored: restored,
                  savedMixes: savedMixes, artwork: artwork, journal: journal)
    }

    /// Like `init(config:catalog:environment:revisionReservation:epoch:restored:)`
    /// with a counter built by the caller, e.g. one whose stored reservation
    /// was unreadable (`RevisionCounter(unreadableReservation:)`).
    public init(config: SpeakerConfig, catalog: [CatalogEntry], environment: SpeakerEnvironment,
                revisions: RevisionCounter, restored: PersistedState? = nil, savedMixes: SavedMixes? = nil,
                artwork: [ArtworkFile] = [], journal: CommandJournal? = nil) {
        self.environment = environment
        topics = SpeakerTopics(root: config.topicRoot)
        let volume: VolumeState = config.volume.mode == .gpioStep
            ? .relative : .absolute(level: min(config.volume.initialLevel, config.volume.maxLevel))
        state = SpeakerState(config: config, catalog: catalog, volume: volume,
                             revision: revisions,
                             inputs: InputDecoders(config: config.inputs), savedMixes: savedMixes)
        restore(restored)
        if let journal {
            state.commands.restore(journal)
            if !journal.held.isEmpty {
                state.persistence.notes.append((.info, "command journal: \(journal.held.count) command(s) held by the last run, "
                                                + "answered once connected"))
            }
            if !journal.owed.isEmpty {
                state.persistence.notes.append((.info, "command journal: \(journal.owed.count) result(s) the broker had not "
                                                + "acknowledged to the last run, sent again once connected"))
            }
        }
        if !artwork.isEmpty {
            state.artwork = ArtworkState(files: artwork, soundIDs: Set(catalog.filter { $0.kind == .sound }.map(\.id)))
            state.persistence.notes += state.artwork.notes
        }
        if case .fixed(let level) = config.volume.startupLevel, case .absolute = state.volume.level {
            state.volume.level = .absolute(level: min(level, config.volume.maxLevel))
            state.persistence.notes.append((.info, "volume.startupLevel: starting at level \(min(level, config.volume.maxLevel))"))
        }
    }

    /// The earliest instant at which a `.tick` has work to do (debounce, long
    /// press, double press, session idle timeout, state save, a reservation
    /// retry, a stable connection, a discovery re-send, the sleep timer's fade
    /// and end, the cue's end, the status LED's next change); nil when nothing is due.
    public var nextDeadline: MonotonicInstant? {
        [state.input.decoders.nextDeadline, state.transport.idleDeadline(timeoutSeconds: config.session.idleTimeoutSeconds),
         state.persistence.schedule.deadline, state.publishing.reservationRetryAt, state.link.broker.stableDeadline,
         state.link.homeAssistantResendAt, state.sleepTimer.deadline, state.mute.cueEndsAt,
         config.statusLed == nil ? nil : state.statusLight.deadline, state.schedule.deadline, state.schedule.rampAt,
         journalDeadline]
            .compactMap { $0 }.min()
    }

    /// Applies one action and returns the effects to perform, in order: the
    /// action's own, then whatever it changed published (`publishChanges`),
    /// then the state written when a write is due (`persistIfDue`) — and,
    /// ahead of all of them, the command journal when what it must hold
    /// changed (`journalIfDue`).
    public mutating func reduce(_ action: SpeakerAction) -> [SpeakerEffect] {
        var effects: [SpeakerEffect]
        if let instant = action.instant { state.sleepTimer.now = instant }
        switch action {
        case .start(let now):
            // Discovery before the first `device`/`catalog`/`session`: the MQTT
            // link may already be connected before its `.mqttConnected`
            // reaches the core, and then these go out at once.
            // The schedule is resolved first, so discovery lists its rules.
            let schedule = resolveScheduleConfig(at: now, clampAtOnce: true)
            effects = publishDiscovery() + schedule
            effects += startMixes()
            effects += state.volume.start(tickets: &state.tickets, config: config.volume)
            effects += resumeRestoredStateAndSleepTimer(at: now)
            if !state.link.mqttConnected { state.statusLight.brokerDown(since: now) }
        case .lineEdge(let edge):
            effects = perform(state.input.edge(edge, config: config.inputs), at: edge.at)
        case .tick(let now):
            effects = perform(state.input.advance(to: now, config: config.inputs), at: now)
            effects += advanceSleepTimer(to: now)
            effects += state.transport.endIfIdle(at: now, timeoutSeconds: config.session.idleTimeoutSeconds)
            effects += scheduleTick(at: now)
            effects += state.publishing.retryReservationIfDue(at: now)
            effects += logs(state.link.broker.advance(to: now))
            if state.link.discoveryResendDue(at: now, enabled: config.mqtt.homeAssistant.enabled) {
                effects += publishDiscovery()
            }
        case let .command(incoming, now):
            effects = handleCommand(incoming, at: now)
            effects += resendDiscoveryIfChanged()
        case let .commands(batch, now):
            effects = handleCommands(batch, at: now)
            effects += resendDiscoveryIfChanged()
        case .resultsDelivered(let ids, _):
            state.commands.delivered(ids)
            effects = []
        case .stopping:
            effects = beginStopping()
        case let .engine(report, now):
            effects = handleEngineReport(report, at: now)
        case .mqttConnected(let now):
            state.link.mqttConnected = true
            state.statusLight.brokerDown(since: nil)
            effects = logs(state.link.broker.connected(at: now))
            // Discovery first: Home Assistant must know what the device is
            // (a step-only amp has no volume number) before state that depends on it.
            effects += publishDiscovery()
            effects += publishChanges()
            effects += state.publishing.republishAll(topics)
            effects += answerRestoredCommands(at: now)
        case .mqttDisconnected(let now):
            state.link.mqttConnected = false
            state.statusLight.brokerDown(since: now)
            state.link.broker.disconnected(at: now)
            effects = []
        case .mqttProblem(let problem, _):
            effects = logs(state.link.broker.report(problem, deviceID: config.device.id))
        case .retainedSessionSeen(let payload, let otherPublisher, _):
            state.link.broker.retainedSessionSeen(payload, otherPublisher: otherPublisher)
            effects = []
        case .clockStepped(let now):
            effects = clockStepped(at: now)
        case .clockSyncChanged(let now):
            effects = clockSyncChanged(at: now)
        case .shutdown:
            effects = []  // persistIfDue(force:) below writes anything unsaved
        case let .reconfigure(newConfig, now):
            effects = reconfigure(to: newConfig, at: now)
        case let .revisionReservation(through, failure, now):
            effects = state.publishing.handleReservation(through: through, failure: failure, at: now)
        case let .homeAssistantStatus(online, now):
            effects = state.link.homeAssistantStatus(online: online, enabled: config.mqtt.homeAssistant.enabled,
                                                     randomInt: environment.randomInt, at: now)
        }
        effects = followPlayingLevels(effects)
        effects += publishChanges()
        if let instant = action.instant { effects += statusLedIfChanged(at: instant) }
        var isShutdown = false
        if case .shutdown = action { isShutdown = true }
        effects += persistIfDue(at: action.instant, force: isShutdown)
        return journalIfDue(effects, at: action.instant, force: isShutdown)
    }

    /// Carries out what the inputs asked, in order: `event` publications and
    /// the buttons' and the knob's default actions.
    private mutating func perform(_ intents: [InputIntent], at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        for intent in intents {
            switch intent {
            case .publish(let payload):
                effects.append(.publish(Publication(topic: topics.event, payload: payload.serialized(), qos: 0, retain: false)))
            case let .command(command, button, gesture):
                if command == .toggle && awakeDuringFade(&effects, by: "\(button.rawValue) \(gesture.rawValue)") { continue }
                let (outcome, applied) = apply(command, origin: nil, at: now)
                effects += applied
                if case .rejected(let code, let message) = outcome {
                    effects.append(.log(.notice, "\(button.rawValue) \(gesture.rawValue) ignored (\(code.rawValue)): \(message)"))
                }
            case .volumeSteps(let steps):
                _ = awakeDuringFade(&effects, by: "a knob turn")
                if state.mute.muted { effects += state.mute.set(false) }  // a turn while muted unmutes
                effects += applyVolume(.step(steps), origin: nil).effects
            case .sleepTimerCycle:
                effects += cycleSleepTimer(at: now)
            case .muteToggle:
                effects += state.mute.set(!state.mute.muted)
            }
        }
        return effects
    }

    private func logs(_ lines: [(CoreLogLevel, String)]) -> [SpeakerEffect] {
        lines.map { .log($0.0, $0.1) }
    }
}
