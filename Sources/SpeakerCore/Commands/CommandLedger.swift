// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The commands domain: the results already sent (so a redelivered command
/// gets its original result and is not applied again), the commands held
/// until they are answered (kept in the command journal, `CommandJournal`)
/// and the retained commands ignored. Decides what an incoming payload is —
/// ignored, answered now, or a command to apply — and sends every result;
/// exactly one result goes out per command, across restarts too.
public struct CommandLedger: Equatable, Sendable {
    /// Retained commands ignored since start (the first one is logged).
    public var retainedCommandsIgnored = 0
    var recentResults = RecentResults(capacity: 256)
    /// Commands received and not answered yet, oldest first: applied and
    /// waiting for the engine or a publication, or (while stopping) not applied.
    var held: [HeldCommand] = []
    /// Commands the last process held (restored from the journal), answered
    /// at the first connection.
    var restored: [HeldCommand] = []
    /// Results sent and not yet acknowledged by the broker, oldest first
    /// (`CommandJournal.owed`): the commands they answer were acknowledged,
    /// so after a crash only the journal's copy brings them to the caller.
    var owed: [OwedResult] = []
    /// Results the last process owed, sent again at the first connection.
    var owedByLastRun: [OwedResult] = []
    /// The owed ids the journal on disk lists (a new one is written before
    /// its command's acknowledgement leaves; a delivered one lazily).
    var savedOwedIDs: Set<String> = []
    /// The speaker is stopping: a new command is held for the next process, not applied.
    var stopping = false
    /// The held ids the journal on disk lists (a change is written before
    /// anything else the dispatch does).
    var savedHeldIDs: [String] = []
    /// Results were recorded that the journal on disk lacks (noted by the reduce).
    var answeredUnsaved = false
    /// Since when the journal on disk lacks results (written within `ledgerSaveMs`).
    var answeredUnsavedSince: MonotonicInstant?

    /// How long a result may be missing from the journal on disk: the dedupe
    /// ledger is written lazily (a result that left with its command's
    /// acknowledgement is safe without it: see mqtt-contract.md, "Delivery").
    static let ledgerSaveMs = 1000

    init() {}

    /// Takes the journal the last process left: its results become the
    /// dedupe ledger, its held commands wait for the first connection.
    mutating func restore(_ journal: CommandJournal) {
        for result in journal.answered { if let id = result.id { recentResults.record(result, for: id) } }
        for owed in journal.owed { recentResults.record(owed.result, for: owed.id) }
        restored = journal.held
        owedByLastRun = journal.owed
        savedHeldIDs = heldIDs
        savedOwedIDs = Set(owedIDs)
    }

    /// Every owed id: the last run's (until sent again), then this run's.
    var owedIDs: [String] { owedByLastRun.map(\.id) + owed.map(\.id) }

    /// Whether the journal on disk lacks an owed result (a new one: the
    /// write comes before its command's acknowledgement leaves).
    var owesUnsaved: Bool { owed.contains { !savedOwedIDs.contains($0.id) } }

    /// The broker acknowledged these results.
    mutating func delivered(_ ids: [String]) {
        let done = Set(ids)
        let before = owed.count
        owed.removeAll { done.contains($0.id) }
        if owed.count != before { answeredUnsaved = true }  // the file shrinks lazily
    }

    /// Every held id, restored ones first (the journal's order).
    var heldIDs: [String] { restored.map(\.id) + held.map(\.id) }

    /// Whether `id` is held (restored or received).
    func holds(_ id: String) -> Bool {
        held.contains { $0.id == id } || restored.contains { $0.id == id }
    }

    /// Whether another command may be held (the journal's bound).
    var canHold: Bool { held.count + restored.count < CommandJournal.maxHeld }

    /// Holds a command until its result is sent.
    mutating func hold(_ incoming: IncomingCommand, origin: PendingCommand, receivedAtMs: Int64, applied: Bool) {
        held.append(HeldCommand(id: origin.id, payload: incoming.payload, responseTopic: origin.responseTopic,
                                correlationData: origin.correlationData, receivedAtMs: receivedAtMs, applied: applied))
    }

    /// The journal as it is now.
    func journal(deviceID: String) -> CommandJournal {
        CommandJournal(deviceID: deviceID, held: restored + held, owed: owedByLastRun + owed, answered: recentResults.ordered)
    }
}

/// What an incoming `command` payload turned out to be.
enum CommandIntake {
    /// Nothing to apply; `effects` are its logs and any result, in order.
    case settled([SpeakerEffect])
    /// A well-formed new command to apply for `origin`.
    case apply(CommandEnvelope, origin: PendingCommand)
}

extension CommandLedger {
    /// Takes one `command` payload: a stored retained command (delivered by
    /// the broker on subscribe) is ignored — it would run again at every
    /// start and reconnect; one warning per run says so, and there is no
    /// result (its sender is long gone). A malformed one is answered
    /// `malformed`; a duplicate gets its earlier result, or nothing while the
    /// first is in progress (`inProgress`), whose result follows; one with a
    /// response topic `ResponseTopicPolicy` refuses is refused and nothing is
    /// applied.
    mutating func intake(_ incoming: IncomingCommand, policy: ResponseTopicPolicy, topics: SpeakerTopics,
                         inProgress: (String) -> Bool) -> CommandIntake {
        if incoming.retained {
            retainedCommandsIgnored += 1
            guard retainedCommandsIgnored == 1 else { return .settled([]) }
            return .settled([.log(.warning, "ignoring a retained message on \(topics.command) (a retained command would run "
                + "again at every start); clear it with an empty retained publish to that topic")])
        }
        var responseTopic = incoming.responseTopic.flatMap { $0.isEmpty ? nil : $0 }
        var topicRefusal: String?
        if let requested = responseTopic, let why = policy.refusal(for: requested) {
            topicRefusal = "response topic \"\(requested.prefix(64))\" refused: \(why)"
            responseTopic = nil
        }
        let origin: (String?) -> PendingCommand = { id in
            PendingCommand(id: id ?? "", responseTopic: responseTopic, correlationData: incoming.correlationData)
        }
        let envelope: CommandEnvelope
        switch CommandDecoder().decode(incoming.payload) {
        case .failure(let rejection):
            if let id = rejection.id, let prior = recentResults.result(for: id) {
                return .settled(send(prior, to: origin(id), topics))
            }
            let log = SpeakerEffect.log(.notice, "command rejected (\(rejection.code.rawValue)): \(rejection.message)")
            return .settled([log] + finish(.rejected(rejection), for: origin(rejection.id), topics))
        case .success(let decoded):
            envelope = decoded
        }
        if let prior = recentResults.result(for: envelope.id) {
            let log = SpeakerEffect.log(.debug, "command \(envelope.id) is a duplicate; re-sending its result")
            return .settled([log] + send(prior, to: origin(envelope.id), topics))
        }
        if inProgress(envelope.id) {
            return .settled([.log(.debug, "command \(envelope.id) is a duplicate of one in progress; its result follows")])
        }
        let pending = origin(envelope.id)
        if let topicRefusal {
            let log = SpeakerEffect.log(.notice, "command \(envelope.id) rejected: \(topicRefusal)")
            let rejection = CommandRejection(id: envelope.id, code: .malformed, message: topicRefusal)
            return .settled([log] + finish(.rejected(rejection), for: pending, topics))
        }
        return .apply(envelope, origin: pending)
    }

    /// The answer to a command that was refused when applied.
    mutating func refuse(_ envelope: CommandEnvelope, code: CommandErrorCode, message: String, origin: PendingCommand,
                         topics: SpeakerTopics) -> [SpeakerEffect] {
        let log = SpeakerEffect.log(.notice, "command \(envelope.id) \(envelope.command.action.rawValue) rejected "
                                    + "(\(code.rawValue)): \(message)")
        return [log] + finish(.rejected(CommandRejection(id: envelope.id, code: code, message: message)), for: origin, topics)
    }

    /// Records a final result (for duplicates) and sends it.
    mutating func finish(_ result: CommandResult, for origin: PendingCommand, _ topics: SpeakerTopics) -> [SpeakerEffect] {
        if let id = result.id {
            recentResults.record(result, for: id)
            answeredUnsaved = true
            if let index = held.firstIndex(where: { $0.id == id }) { held.remove(at: index) }
            owe(OwedResult(result: result, responseTopic: origin.responseTopic, correlationData: origin.correlationData))
        }
        return send(result, to: origin, topics)
    }

    /// Keeps a sent result until the broker acknowledges it (bounded: past
    /// `CommandJournal.maxHeld` unacknowledged results the oldest is dropped).
    mutating func owe(_ result: OwedResult) {
        owed.removeAll { $0.id == result.id }
        if owed.count >= CommandJournal.maxHeld { owed.removeFirst() }
        owed.append(result)
    }

    /// The last run's owed results, sent again (at the first connection);
    /// they stay owed until the broker acknowledges them.
    mutating func resendOwedByLastRun(_ topics: SpeakerTopics) -> [SpeakerEffect] {
        let again = owedByLastRun
        owedByLastRun = []
        var effects: [SpeakerEffect] = []
        for entry in again {
            owe(entry)
            effects += send(entry.result, to: PendingCommand(id: entry.id, responseTopic: entry.responseTopic,
                                                             correlationData: entry.correlationData), topics)
        }
        return effects
    }

    /// A result on `command/result` — marked to leave at once — and on the
    /// caller's MQTT v5 response topic with its correlation data when it gave one.
    private func send(_ result: CommandResult, to origin: PendingCommand, _ topics: SpeakerTopics) -> [SpeakerEffect] {
        let payload = result.serialized()
        var effects: [SpeakerEffect] = [
            .publish(Publication(topic: topics.result, payload: payload, qos: 1, retain: false, deliverNow: true,
                                 resultID: result.id))]
        if let responseTopic = origin.responseTopic, !responseTopic.isEmpty {
            effects.append(.publish(Publication(topic: responseTopic, payload: payload, qos: 1, retain: false,
                                                correlationData: origin.correlationData)))
        }
        return effects
    }
}
