import SpeakerProtocol

extension Speaker {
    /// Handles one `command` payload: decode, de-duplicate, apply, and make
    /// sure exactly one `command/result` goes out (now, or after the engine
    /// has done it and the change is published).
    mutating func handleCommand(_ incoming: IncomingCommand, at now: MonotonicInstant) {
        let origin: (String?) -> PendingCommand = { id in
            PendingCommand(id: id ?? "", responseTopic: incoming.responseTopic, correlationData: incoming.correlationData)
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
        let payload = result.json.serialized()
        effects.append(.publish(Publication(topic: topic("command/result"), payload: payload, qos: 1, retain: false)))
        if let responseTopic = origin.responseTopic, !responseTopic.isEmpty {
            effects.append(.publish(Publication(topic: responseTopic, payload: payload, qos: 1, retain: false,
                                                correlationData: origin.correlationData)))
        }
    }
}
