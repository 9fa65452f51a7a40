import SpeakerProtocol

/// The speaker's behaviour: the one owner of all state.
///
/// `reduce(_:)` takes an action (an input edge, a command payload, an engine
/// report, a tick) and returns the effects for the adapters to perform, in
/// order. It never performs I/O and never reads a clock: time arrives with
/// the actions and the rest through `SpeakerEnvironment`. Use it from one
/// thread (the main loop).
///
/// Where to look: transport (play, pause, next…) in `Speaker+Transport`,
/// commands and their results in `Speaker+Commands`, volume in
/// `Speaker+Volume`, what gets published and when in `Speaker+Publishing`.
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
    /// Effects accumulated by the action being reduced.
    var effects: [SpeakerEffect] = []
    /// Accepted commands whose result waits for the publication that shows
    /// their change (kept in `state.resultsAwaitingPublish`).
    var resultsAwaitingPublish: [(PendingCommand, level: Double?)] {
        get { state.resultsAwaitingPublish.map { ($0.origin, level: $0.level) } }
        set { state.resultsAwaitingPublish = newValue.map { AwaitingResult(origin: $0.0, level: $0.level) } }
    }

    /// - Parameters:
    ///   - catalog: the sounds in playback order (at least one).
    ///   - revisionReservation: the last durably reserved revision (0 on a fresh device).
    ///   - restored: the persisted state loaded from `stateDirectory` (nil: defaults).
    public init(config: SpeakerConfig, catalog: [CatalogEntry], environment: SpeakerEnvironment,
                revisionReservation: UInt64, restored: PersistedState? = nil) {
        self.init(config: config, catalog: catalog, environment: environment,
                  revisions: RevisionCounter(persistedReservation: revisionReservation), restored: restored)
    }

    /// Like `init(config:catalog:environment:revisionReservation:restored:)`
    /// with a counter built by the caller, e.g. one whose stored reservation
    /// was unreadable (`RevisionCounter(unreadableReservation:)`).
    public init(config: SpeakerConfig, catalog: [CatalogEntry], environment: SpeakerEnvironment,
                revisions: RevisionCounter, restored: PersistedState? = nil) {
        self.environment = environment
        topics = SpeakerTopics(root: config.topicRoot)
        let volume: VolumeState = config.volume.mode == .gpioStep
            ? .relative : .absolute(level: min(config.volume.initialLevel, config.volume.maxLevel))
        state = SpeakerState(config: config, catalog: catalog, volume: volume,
                             revision: revisions,
                             inputs: InputDecoders(config: config.inputs))
        restore(restored)
    }

    /// The earliest instant at which a `.tick` has work to do (debounce, long
    /// press, double press, session idle timeout, state save); nil when nothing is due.
    public var nextDeadline: MonotonicInstant? {
        [state.inputs.nextDeadline, idleDeadline, state.persistence.schedule.deadline, state.reservationRetryAt, state.broker.stableDeadline,
         state.homeAssistantResendAt]
            .compactMap { $0 }.min()
    }

    /// Applies one action and returns the effects to perform, in order.
    public mutating func reduce(_ action: SpeakerAction) -> [SpeakerEffect] {
        effects = []
        switch action {
        case .start(let now):
            // Discovery before the first `device`/`catalog`/`session` (published
            // below): the MQTT link may already be connected before its
            // `.mqttConnected` reaches the core, and then these go out at once.
            publishDiscovery()
            if case .absolute(let level) = state.volume {
                if config.volume.mode == .alsaMixer {
                    // The mixer element carries the level; the software gain stays at unity.
                    effects.append(.audio(.setLevel(1)))
                    requestMixerLevel(level, origin: nil)
                } else {
                    effects.append(.audio(.setLevel(level)))
                }
            }
            resumeRestoredState(at: now)
        case .lineEdge(let edge):
            for event in state.inputs.edge(edge) { handleInput(event, at: edge.at) }
        case .tick(let now):
            for event in state.inputs.advance(to: now) { handleInput(event, at: now) }
            if let deadline = idleDeadline, deadline <= now {
                effects.append(.log(.info, "session \(state.session.id ?? "-") ended after \(config.session.idleTimeoutSeconds) s paused"))
                endSession()
            }
            retryReservationIfDue(at: now)
            logAll(state.broker.advance(to: now))
            resendDiscoveryIfDue(at: now)
        case let .command(incoming, now):
            handleCommand(incoming, at: now)
        case let .engine(report, now):
            handleEngineReport(report, at: now)
        case .mqttConnected(let now):
            state.mqttConnected = true
            logAll(state.broker.connected(at: now))
            // Discovery first: Home Assistant must know what the device is
            // (a step-only amp has no volume number) before state that depends on it.
            publishDiscovery()
            publishChanges()
            republishAll()
        case .mqttDisconnected(let now):
            state.mqttConnected = false
            state.broker.disconnected(at: now)
        case .mqttProblem(let problem, _):
            logAll(state.broker.report(problem, deviceID: config.device.id))
        case .retainedSessionSeen(let payload, let otherPublisher, _):
            state.broker.retainedSessionSeen(payload, otherPublisher: otherPublisher)
        case .shutdown:
            break  // persistIfDue(force:) below writes anything unsaved
        case let .reconfigure(newConfig, now):
            reconfigure(to: newConfig, at: now)
        case let .revisionReservation(through, failure, now):
            handleReservation(through: through, failure: failure, at: now)
        case let .homeAssistantStatus(online, now):
            homeAssistantStatus(online: online, at: now)
        }
        publishChanges()
        if case .shutdown = action { persistIfDue(at: action.instant, force: true) } else { persistIfDue(at: action.instant) }
        return effects
    }

    /// Acts on a decoded physical input: publishes it on `event`, then applies
    /// the default action (hardware.md, "Inputs"). A press is acted on when it
    /// begins (`.down`) wherever nothing a later gesture could mean conflicts
    /// (``actsOnDown(_:)``); its release then only publishes `press`.
    mutating func handleInput(_ event: InputEvent, at now: MonotonicInstant) {
        switch event {
        case let .button(button, .down):
            guard actsOnDown(button) else {
                state.actedOnDown.remove(button)
                return
            }
            state.actedOnDown.insert(button)
            apply(button: button, gesture: .press, at: now)
        case let .button(button, gesture):
            publishEvent(.button(name: button.rawValue, gesture: gesture.rawValue))
            let acted = state.actedOnDown.remove(button) != nil
            if gesture == .press && acted { return }
            apply(button: button, gesture: gesture, at: now)
        case let .knob(detents, steps):
            publishEvent(.knob(delta: detents))
            _ = stepVolume(by: steps)
        }
    }

    /// Whether a press that has just begun may act now rather than at its
    /// release: always, unless double press is enabled (the press may be half
    /// of a double). next, previous and the encoder switch mean nothing else
    /// when held. play/pause toggles at once too: while playing it pauses (a
    /// long press then stops, and the fade-out under way is what stop sounds
    /// like); while paused it plays, and a long press still means stop (the
    /// session ends with stop's fade-out, so the hold is heard as a short
    /// swell). README "Decisions" says why: the common short press is ~130 ms
    /// sooner, and a long press from paused is rare.
    private func actsOnDown(_ button: TransportButton) -> Bool {
        config.inputs.doublePressMs == 0
    }

    /// Applies the default action of `gesture` on `button`, if it has one.
    private mutating func apply(button: TransportButton, gesture: ButtonGesture, at now: MonotonicInstant) {
        let command: Command?
        switch (button, gesture) {
        case (.playPause, .press), (.encoderSwitch, .press): command = .toggle
        case (.playPause, .long): command = .stop
        case (.next, .press): command = .next
        case (.previous, .press): command = .previous
        default: command = nil
        }
        guard let command else { return }
        if case .rejected(let code, let message) = apply(command, origin: nil, at: now) {
            effects.append(.log(.notice, "\(button.rawValue) \(gesture.rawValue) ignored (\(code.rawValue)): \(message)"))
        }
    }

    private mutating func logAll(_ lines: [(CoreLogLevel, String)]) {
        for (level, text) in lines { effects.append(.log(level, text)) }
    }

    private mutating func publishEvent(_ payload: InputEventPayload) {
        effects.append(.publish(Publication(topic: topics.event, payload: payload.serialized(), qos: 0, retain: false)))
    }
}
