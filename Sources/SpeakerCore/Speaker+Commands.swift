import SpeakerProtocol

extension Speaker {
    /// Handles one `command` payload: decode, de-duplicate, apply, and make
    /// sure exactly one `command/result` goes out (now, or after the engine
    /// has done it and the change is published).
    ///
    /// A stored retained command (delivered by the broker on subscribe) is
    /// ignored: it would run again at every start and reconnect. One warning
    /// per run says so; no result (its sender is long gone). A command with
    /// a response topic `ResponseTopicPolicy` refuses is rejected (`malformed`,
    /// on `command/result` only) and nothing is applied.
    mutating func handleCommand(_ incoming: IncomingCommand, at now: MonotonicInstant) {
        if incoming.retained {
            state.retainedCommandsIgnored += 1
            if state.retainedCommandsIgnored == 1 {
                effects.append(.log(.warning, "ignoring a retained message on \(topics.command) (a retained command would run "
                    + "again at every start); clear it with an empty retained publish to that topic"))
            }
            return
        }
        var responseTopic = incoming.responseTopic.flatMap { $0.isEmpty ? nil : $0 }
        var topicRefusal: String?
        if let requested = responseTopic, let why = ResponseTopicPolicy(config: config).refusal(for: requested) {
            topicRefusal = "response topic \"\(requested.prefix(64))\" refused: \(why)"
            responseTopic = nil
        }
        let origin: (String?) -> PendingCommand = { id in
            PendingCommand(id: id ?? "", responseTopic: responseTopic, correlationData: incoming.correlationData)
        }
        let envelope: CommandEnvelope
        switch CommandDecoder().decode(incoming.payload) {
        case .failure(let rejection):
            if let id = rejection.id, let prior = state.recentResults.result(for: id) {
                sendResult(prior, to: origin(id))
                return
            }
            effects.append(.log(.notice, "command rejected (\(rejection.code.rawValue)): \(rejection.message)"))
            finish(.rejected(rejection), for: origin(rejection.id))
            return
        case .success(let decoded):
            envelope = decoded
        }
        if let prior = state.recentResults.result(for: envelope.id) {
            effects.append(.log(.debug, "command \(envelope.id) is a duplicate; re-sending its result"))
            sendResult(prior, to: origin(envelope.id))
            return
        }
        if state.outstanding.values.contains(where: { $0?.id == envelope.id })
            || resultsAwaitingPublish.contains(where: { $0.0.id == envelope.id })
            || state.pendingLevels.values.contains(where: { $0.origin?.id == envelope.id }) {
            effects.append(.log(.debug, "command \(envelope.id) is a duplicate of one in progress; its result follows"))
            return
        }
        let pending = origin(envelope.id)
        if let topicRefusal {
            effects.append(.log(.notice, "command \(envelope.id) rejected: \(topicRefusal)"))
            finish(.rejected(CommandRejection(id: envelope.id, code: .malformed, message: topicRefusal)), for: pending)
            return
        }
        let outcome = withheldRejection().map { ApplyOutcome.rejected($0.0, $0.1) }
            ?? apply(envelope.command, origin: pending, at: now)
        switch outcome {
        case .done(let level):
            resultsAwaitingPublish.append((pending, level: level))
        case .awaitingEngine:
            break
        case let .rejected(code, message):
            effects.append(.log(.notice, "command \(envelope.id) \(envelope.command.action.rawValue) rejected (\(code.rawValue)): \(message)"))
            finish(.rejected(CommandRejection(id: envelope.id, code: code, message: message)), for: pending)
        }
    }

    /// Records a final result (for de-duplication) and sends it.
    mutating func finish(_ result: CommandResult, for origin: PendingCommand) {
        if let id = result.id { state.recentResults.record(result, for: id) }
        sendResult(result, to: origin)
    }

    /// Publishes a result on `command/result`, and on the caller's MQTT v5
    /// response topic with its correlation data when it gave one.
    private mutating func sendResult(_ result: CommandResult, to origin: PendingCommand) {
        let payload = result.serialized()
        effects.append(.publish(Publication(topic: topics.result, payload: payload, qos: 1, retain: false, deliverNow: true)))
        if let responseTopic = origin.responseTopic, !responseTopic.isEmpty {
            effects.append(.publish(Publication(topic: responseTopic, payload: payload, qos: 1, retain: false,
                                                correlationData: origin.correlationData)))
        }
    }
}
