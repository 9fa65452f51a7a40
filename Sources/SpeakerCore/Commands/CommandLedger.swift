// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The commands domain: the results already sent (so a redelivered command
/// gets its original result and is not applied again) and the retained
/// commands ignored. Decides what an incoming payload is — ignored, answered
/// now, or a command to apply — and sends every result; exactly one result
/// goes out per command.
public struct CommandLedger: Equatable, Sendable {
    /// Retained commands ignored since start (the first one is logged).
    public var retainedCommandsIgnored = 0
    var recentResults = RecentResults(capacity: 256)

    init() {}
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
        if let id = result.id { recentResults.record(result, for: id) }
        return send(result, to: origin, topics)
    }

    /// A result on `command/result` — marked to leave at once — and on the
    /// caller's MQTT v5 response topic with its correlation data when it gave one.
    private func send(_ result: CommandResult, to origin: PendingCommand, _ topics: SpeakerTopics) -> [SpeakerEffect] {
        let payload = result.serialized()
        var effects: [SpeakerEffect] = [
            .publish(Publication(topic: topics.result, payload: payload, qos: 1, retain: false, deliverNow: true))]
        if let responseTopic = origin.responseTopic, !responseTopic.isEmpty {
            effects.append(.publish(Publication(topic: responseTopic, payload: payload, qos: 1, retain: false,
                                                correlationData: origin.correlationData)))
        }
        return effects
    }
}
