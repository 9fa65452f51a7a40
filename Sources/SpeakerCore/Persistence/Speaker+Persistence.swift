// SPDX-License-Identifier: Apache-2.0
/// The core's side of persistence: what was restored at start, and when the
/// current state must be written. Owned by `SpeakerState.persistence`.
public struct PersistenceState: Equatable, Sendable {
    /// The write schedule (rate limit) and what is on disk.
    public var schedule = StateSaveSchedule(saved: nil)
    /// Resume playback on `.start` (restored intent and `session.resumeOnBoot`).
    public var resumeAtStart = false
    /// What restoring found, logged on `.start`.
    var notes: [(CoreLogLevel, String)] = []

    public init() {}

    public static func == (a: PersistenceState, b: PersistenceState) -> Bool {
        a.schedule == b.schedule && a.resumeAtStart == b.resumeAtStart
            && a.notes.map(\.1) == b.notes.map(\.1)
    }
}

extension Speaker {
    /// The state worth keeping, as it is now: the selected sound, the level
    /// (absolute hardware only) and the listener's playback intent.
    public var persistedSnapshot: PersistedState {
        var level: Double?
        if case .absolute(let l) = state.volume.level { level = l }
        let schedule = state.schedule
        return PersistedState(soundID: state.transport.selectedSound.id, level: level,
                              intendsPlayback: state.transport.session.intendsPlayback, sleepTimer: persistedSleepTimer,
                              schedule: PersistedSchedule(rules: schedule.rulesOverride, nightCap: schedule.nightCapOverride,
                                                          firedThrough: schedule.firedThrough))
    }

    /// Applies a state loaded from disk (called from `init`): selects its
    /// sound, takes its level (clamped to `volume.maxLevel`; ignored on
    /// step-only hardware) and, with `session.resumeOnBoot`, arranges for
    /// playback to resume on `.start`.
    mutating func restore(_ restored: PersistedState?) {
        state.persistence.schedule = StateSaveSchedule(saved: restored)
        guard let restored else { return }
        state.sleepTimer.restored = restored.sleepTimer
        state.schedule.rulesOverride = restored.schedule.rules
        state.schedule.nightCapOverride = restored.schedule.nightCap
        state.schedule.firedThrough = restored.schedule.firedThrough
        state.schedule.through = restored.schedule.firedThrough
        var notes: [(CoreLogLevel, String)] = [(.info, "restored \(restored.summary)")]
        if let index = state.transport.catalog.firstIndex(where: { $0.id == restored.soundID }) {
            state.transport.selectedIndex = index
        } else {
            notes.append((.warning, "saved sound \"\(restored.soundID)\" is not in the catalog; "
                          + "selecting \"\(state.transport.selectedSound.id)\""))
        }
        switch (state.volume.level, restored.level) {
        case (.absolute, .some(let level)):
            let clamped = VolumeControlState.tidy(min(max(level, 0), config.volume.maxLevel))
            if clamped != level { notes.append((.notice, "saved level \(level) is above volume.maxLevel; using \(clamped)")) }
            state.volume.level = .absolute(level: clamped)
        case (.relative, .some):
            notes.append((.notice, "saved level ignored: volume.mode is gpio-step (no level exists)"))
        case (.absolute, .none), (.relative, .none):
            break
        }
        state.persistence.resumeAtStart = restored.intendsPlayback && config.session.resumeOnBoot
        if restored.intendsPlayback && !config.session.resumeOnBoot {
            notes.append((.info, "session.resumeOnBoot is false: not resuming playback"))
        }
        state.persistence.notes = notes
    }

    /// On `.start`: logs what restoring found and resumes playback if asked.
    mutating func resumeRestoredState(at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = state.persistence.notes.map { .log($0.0, $0.1) }
        state.persistence.notes = []
        guard state.persistence.resumeAtStart else { return effects }
        state.persistence.resumeAtStart = false
        effects.append(.log(.info, "resuming \"\(state.transport.selectedSound.id)\" (session.resumeOnBoot)"))
        let (outcome, applied) = apply(.play, origin: nil, at: now)
        effects += applied
        if case .rejected(_, let message) = outcome {
            effects.append(.log(.warning, "cannot resume playback: \(message)"))
        }
        return effects
    }

    /// After every action: notes the current state and emits `.saveState`
    /// when a write is due (or, with `force`, whenever something is unsaved).
    mutating func persistIfDue(at now: MonotonicInstant?, force: Bool = false) -> [SpeakerEffect] {
        guard let now else { return [] }
        let snapshot = persistedSnapshot
        state.persistence.schedule.observe(snapshot, at: now)
        // A rule that fired is written at once: a power cut in the settle
        // time must not fire it again after the restart.
        let fired = snapshot.schedule.firedThrough != state.persistence.schedule.saved?.schedule.firedThrough
        return state.persistence.schedule.due(snapshot, at: now, force: force || fired).map { [.saveState($0)] } ?? []
    }
}

extension SpeakerAction {
    /// When the action happened, for the persistence schedule.
    var instant: MonotonicInstant? {
        switch self {
        case .start(let at), .tick(let at), .command(_, let at), .commands(_, let at), .resultsDelivered(_, let at),
             .stopping(let at), .engine(_, let at),
             .mqttConnected(let at), .mqttDisconnected(let at), .mqttProblem(_, let at), .retainedSessionSeen(_, _, let at),
             .shutdown(let at), .reconfigure(_, let at), .revisionReservation(_, _, let at),
             .homeAssistantStatus(_, let at), .clockStepped(let at), .clockSyncChanged(let at):
            return at
        case .lineEdge(let edge):
            return edge.at
        }
    }
}
