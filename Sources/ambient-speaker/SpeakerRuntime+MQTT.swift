import SpeakerCore
import SpeakerSystem
import MQTTLink

/// The MQTT side: settings from the config, inbound events, publishing.
extension SpeakerRuntime {
    /// Settings from the config: the stable client id, credentials (the
    /// password read from `passwordFile`, first line, never logged), TLS,
    /// the will, and the subscriptions (`command`, plus Home Assistant's
    /// status topic — even with discovery off, since a reload can turn it on).
    static func makeMQTT(config: SpeakerConfig, logger: Logger) throws -> MQTTLink {
        let root = config.topicRoot
        var password: String?
        if let file = config.mqtt.passwordFile {
            do {
                password = try FileIO.readText(path: file, maxBytes: 4096).split(separator: "\n").first.map(String.init) ?? ""
            } catch {
                throw StartupError(exitCode: 1, message: "mqtt.passwordFile: cannot read \(file): \(error.message)")
            }
        }
        let settings = MQTTSettings(
            host: config.mqtt.host, port: config.mqtt.port, clientID: "ambient-speaker-\(config.device.id)",
            keepaliveSeconds: config.mqtt.keepaliveSeconds, username: config.mqtt.username, password: password,
            tls: config.mqtt.tls.map { MQTTTLS(caFile: $0.caFile, certFile: $0.certFile, keyFile: $0.keyFile) },
            will: MQTTWill(topic: "\(root)/availability", payload: Array("offline".utf8), qos: 1, retain: true),
            subscriptions: ["\(root)/command", HomeAssistantDiscovery.statusTopic(config),
                            // Its own retained session, to recognise a twin with the same device id (BrokerHealth).
                            "\(root)/session"])
        return try MQTTLink(settings: settings, logger: logger.named("mqtt"))
    }

    func startMQTT() throws {
        loop.addReader(fd: mqtt.eventFD) { [unowned self] in self.mqttEvents() }
        do { try mqtt.start() } catch {
            throw StartupError(exitCode: 2, message: "mqtt: \(error)")
        }
    }

    /// `offline` (acknowledged) before a clean disconnect.
    func stopMQTT() {
        mqtt.shutdown(finalPublish: (topic: "\(config.topicRoot)/availability", payload: Array("offline".utf8), retain: true),
                      timeoutMs: 1500)
    }

    func perform(_ p: Publication) {
        if case .rejected(let error) = mqtt.publish(topic: p.topic, payload: p.payload, qos: p.qos, retain: p.retain,
                                                     correlationData: p.correlationData) {
            logger.warning("publish to \(p.topic) failed: \(error)")
        }
    }

    /// Drains the MQTT link's events into the core.
    func mqttEvents() {
        let commandTopic = "\(config.topicRoot)/command"
        let homeAssistantStatus = HomeAssistantDiscovery.statusTopic(config)
        for event in mqtt.drainEvents() {
            switch event {
            case .connected:
                logger.info("connected to \(config.mqtt.host):\(config.mqtt.port)")
                dispatch(.mqttConnected(at: now()))
            case .disconnected:
                logger.info("disconnected from the broker; reconnecting")  // the core logs why (.problem)
                dispatch(.mqttDisconnected(at: now()))
            case .problem(let problem):
                dispatch(.mqttProblem(problem, at: now()))
            case .message(let m) where m.topic == commandTopic:
                dispatch(.command(IncomingCommand(payload: m.payload, responseTopic: m.responseTopic,
                                                  correlationData: m.correlationData, retained: m.retain), at: now()))
            case .message(let m) where m.topic == "\(config.topicRoot)/session":
                if m.retain {
                    let other = m.publisher.map { $0 != mqtt.instanceID } ?? false
                    dispatch(.retainedSessionSeen(m.payload, otherPublisher: other, at: now()))
                }
            case .message(let m) where m.topic == homeAssistantStatus:
                // Home Assistant (re)started: the core re-sends discovery once per burst.
                dispatch(.homeAssistantStatus(online: m.payload == Array("online".utf8), at: now()))
            case .message(let m):
                logger.debug("ignoring a message on \(m.topic)")
            }
        }
    }
}
