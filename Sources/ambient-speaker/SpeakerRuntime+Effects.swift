import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import Ambience
import AudioALSA
import MQTTLink

/// The effect runner and the adapters' inbound events: the only place where
/// core effects become adapter calls and adapter news becomes core actions.
extension SpeakerRuntime {
    /// Software volume changes ramp over this long, so a fast knob never zippers.
    static let levelRampMs = 60

    func perform(_ effect: SpeakerEffect) {
        switch effect {
        case .audio(let request):
            perform(request)
        case .amp(let pulse):
            switch pulse {
            case .up(let n): for _ in 0..<n { board?.recordPulse(up: true) }
            case .down(let n): for _ in 0..<n { board?.recordPulse(up: false) }
            }
        case .publish(let p):
            if case .rejected(let error) = mqtt.publish(topic: p.topic, payload: p.payload, qos: p.qos, retain: p.retain,
                                                         correlationData: p.correlationData) {
                logger.warning("publish to \(p.topic) failed: \(error)")
            }
        case .reserveRevisions(let through):
            revisions.reserve(through: through)
        case let .log(level, message):
            logger.log(level.systemLevel, message)
        }
    }

    private func perform(_ request: AudioRequest) {
        let rate = engine.sampleRate
        func source(_ id: String) -> SoundSource? {
            guard let sound = BuiltInSounds.sound(id: id) else {
                logger.error("sound \"\(id)\" is in the catalog but has no source")
                return nil
            }
            return sound.makeSource(sampleRate: rate)
        }
        let sent: Bool
        switch request {
        case let .play(id, fadeMs, ticket):
            guard let s = source(id) else { return }
            sent = engine.send(.play(s, fadeMs: fadeMs, ticket: ticket))
        case let .switchTo(id, crossfadeMs, ticket):
            guard let s = source(id) else { return }
            sent = engine.send(.switchTo(s, crossfadeMs: crossfadeMs, ticket: ticket))
        case let .pause(fadeMs, ticket):
            sent = engine.send(.pause(fadeMs: fadeMs, ticket: ticket))
        case .setLevel(let level):
            sent = engine.send(.setGain(VolumeCurve.gain(level: level), rampMs: Self.levelRampMs))
        }
        if !sent { logger.error("the audio engine did not take \(request)") }
    }

    /// Drains the audio engine's reports into the core.
    func engineReports() {
        for report in engine.drainReports() {
            switch report {
            case .playing(let ticket): dispatch(.engine(.playing(ticket: ticket), at: now()))
            case .paused(let ticket): dispatch(.engine(.paused(ticket: ticket), at: now()))
            case .deviceAvailable: dispatch(.engine(.available, at: now()))
            case .deviceUnavailable(let reason): dispatch(.engine(.unavailable(reason: reason), at: now()))
            case .underruns(let total):
                logger.warning("audio underrun (\(total) so far)")
                dispatch(.engine(.underruns(total: total), at: now()))
            case .realtimeScheduling(let granted):
                if granted { logger.info("audio thread runs with SCHED_FIFO real-time priority") }
                else { logger.notice("audio thread could not get SCHED_FIFO (needs root or CAP_SYS_NICE / LimitRTPRIO); running at normal priority") }
            case .retired:
                break // released here, on the main thread, as the report goes out of scope
            }
        }
    }

    /// Drains the MQTT link's events into the core.
    func mqttEvents() {
        let commandTopic = "\(config.topicRoot)/command"
        for event in mqtt.drainEvents() {
            switch event {
            case .connected:
                logger.info("connected to \(config.mqtt.host):\(config.mqtt.port)")
                dispatch(.mqttConnected(at: now()))
            case .disconnected(let reason):
                logger.notice("disconnected from the broker (reason \(reason)); reconnecting")
                dispatch(.mqttDisconnected(at: now()))
            case .message(let m) where m.topic == commandTopic:
                dispatch(.command(IncomingCommand(payload: m.payload, responseTopic: m.responseTopic,
                                                  correlationData: m.correlationData), at: now()))
            case .message(let m):
                logger.debug("ignoring a message on \(m.topic)")
            }
        }
    }
}

extension CoreLogLevel {
    var systemLevel: LogLevel {
        switch self {
        case .error: return .error
        case .warning: return .warning
        case .notice: return .notice
        case .info: return .info
        case .debug: return .debug
        }
    }
}
