// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The command journal (`CommandJournal`): when it is written, what a
/// stopping speaker does with a new command, and how the next process
/// answers what the last one held (mqtt-contract.md, "Delivery").
extension Speaker {
    /// The wall clock in milliseconds since the Unix epoch.
    var wallClockMs: Int64 {
        let now = environment.wallClock()
        return now.seconds * 1000 + Int64(now.milliseconds)
    }

    /// The journal as it is now.
    public var journalSnapshot: CommandJournal { state.commands.journal(deviceID: config.device.id) }

    /// After every action: a change to the held commands, or a result sent
    /// that the broker has not acknowledged yet (owed), is written before
    /// anything else the dispatch does — before a new command's effects and
    /// its MQTT acknowledgement leave, before a held command's result does:
    /// an acknowledged command is on disk until its result is acknowledged in
    /// turn. What only shrinks the file (a result acknowledged) and the
    /// dedupe ledger's results are written within `CommandLedger.ledgerSaveMs`,
    /// with the next write, or at `force` (the stop).
    mutating func journalIfDue(_ effects: [SpeakerEffect], at now: MonotonicInstant?, force: Bool) -> [SpeakerEffect] {
        guard let now else { return effects }
        if state.commands.answeredUnsaved {
            state.commands.answeredUnsaved = false
            if state.commands.answeredUnsavedSince == nil { state.commands.answeredUnsavedSince = now }
        }
        let heldIDs = state.commands.heldIDs
        let ledgerDue = state.commands.answeredUnsavedSince.map {
            force || now >= $0.advanced(byMilliseconds: CommandLedger.ledgerSaveMs)
        } ?? false
        guard heldIDs != state.commands.savedHeldIDs || state.commands.owesUnsaved || ledgerDue else { return effects }
        state.commands.savedHeldIDs = heldIDs
        state.commands.savedOwedIDs = Set(state.commands.owedIDs)
        state.commands.answeredUnsavedSince = nil
        return [.saveJournal(journalSnapshot)] + effects
    }

    /// When the journal's results are next due on disk.
    var journalDeadline: MonotonicInstant? {
        state.commands.answeredUnsavedSince?.advanced(byMilliseconds: CommandLedger.ledgerSaveMs)
    }

    /// The stop began (before the MQTT service's closing handshake): from now
    /// on a command is held for the next process, not applied; what is in
    /// progress still completes and is answered.
    mutating func beginStopping() -> [SpeakerEffect] {
        guard !state.commands.stopping else { return [] }
        state.commands.stopping = true
        return [.log(.info, "stopping: commands arriving from now on are kept for the next start")]
    }

    /// Several `command` payloads read together: handled in order in one
    /// dispatch, so the journal holding them is written once, before any
    /// of their acknowledgements leaves.
    mutating func handleCommands(_ batch: [IncomingCommand], at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        for incoming in batch { effects += handleCommand(incoming, at: now) }
        return effects
    }

    /// At the first connection: the commands the last process held get their
    /// one result. One that was applied but not confirmed is answered
    /// `expired` (it may have taken effect; it is not applied again); one
    /// that was not applied is applied now unless it is older than
    /// `CommandJournal.maxAgeSeconds` or its age is unknown (the wall clock
    /// went back), which is answered `expired`.
    mutating func answerRestoredCommands(at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        let owed = state.commands.owedByLastRun.count
        if owed > 0 {
            effects.append(.log(.info, "sending again \(owed) result(s) the broker had not acknowledged to the last run"))
            effects += state.commands.resendOwedByLastRun(topics)
        }
        let restored = state.commands.restored
        guard !restored.isEmpty else { return effects }
        state.commands.restored = []
        effects.append(.log(.info, "answering \(restored.count) command(s) held by the last run"))
        let wall = wallClockMs
        for entry in restored {
            let origin = PendingCommand(id: entry.id, responseTopic: entry.responseTopic, correlationData: entry.correlationData)
            let age = wall - entry.receivedAtMs
            let why: String?
            if entry.applied {
                why = "the speaker stopped before it confirmed this command; it may have taken effect and is not applied again"
            } else if age < -CommandJournal.clockToleranceMs {
                why = "received before a restart at a wall-clock time \((-age) / 1000) s ahead of now; its age is unknown"
            } else if age > Int64(CommandJournal.maxAgeSeconds) * 1000 {
                why = "received \(age / 1000) s ago, before a restart; held commands older than "
                    + "\(CommandJournal.maxAgeSeconds) s are not applied"
            } else {
                why = nil
            }
            if let why {
                let rejection = CommandRejection(id: entry.id, code: .expired, message: why)
                effects.append(.log(.notice, "command \(entry.id) expired: \(why)"))
                effects += state.commands.finish(.rejected(rejection), for: origin, topics)
                continue
            }
            let incoming = IncomingCommand(payload: entry.payload, responseTopic: entry.responseTopic,
                                           correlationData: entry.correlationData)
            effects += handleCommand(incoming, at: now, receivedAtMs: entry.receivedAtMs)
        }
        return effects
    }
}
