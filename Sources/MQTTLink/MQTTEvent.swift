import SpeakerCore

/// Something that happened on the connection, produced on libmosquitto's
/// thread and handed to the main loop by `MQTTLink.drainEvents()`.
public enum MQTTEvent: Sendable, Equatable {
    /// The broker accepted the connection (CONNACK success). The link has
    /// already re-sent every subscription; the core should republish its
    /// retained state now. `sessionPresent` is the CONNACK flag.
    case connected(sessionPresent: Bool)
    /// The connection ended. `reason` is 0 after our own clean disconnect,
    /// otherwise a libmosquitto error code (`MOSQ_ERR_*`, e.g. 7 = connection
    /// lost) or an MQTT v5 reason code from the broker. The link keeps
    /// reconnecting by itself on its backoff schedule.
    case disconnected(reason: Int32)
    /// Why the link is not connected: a failed connection attempt (posted
    /// after each one; no `.disconnected` precedes it), or the cause of the
    /// loss just posted as `.disconnected`. The core decides what to log.
    case problem(ConnectionProblem)
    /// A message arrived on a subscribed topic.
    case message(MQTTMessage)
}

/// An incoming PUBLISH, copied out of libmosquitto's buffers.
public struct MQTTMessage: Sendable, Equatable {
    /// Topic the message was published to.
    public var topic: String
    /// Payload bytes, exactly as received (may be empty).
    public var payload: [UInt8]
    /// QoS the message was delivered with.
    public var qos: Int
    /// Whether the broker delivered it as a retained message.
    public var retain: Bool
    /// MQTT v5 Response Topic property, if the sender set one.
    public var responseTopic: String?
    /// MQTT v5 Correlation Data property, if the sender set one.
    public var correlationData: [UInt8]?
    /// The MQTT v5 user property `publisher`: the `instanceID` of the
    /// speaker link that published it (nil from anyone else).
    public var publisher: String?

    /// Creates a message (used by tests and fakes).
    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool = false,
                responseTopic: String? = nil, correlationData: [UInt8]? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.responseTopic = responseTopic
        self.correlationData = correlationData
    }
}

/// What `MQTTLink.publish` did with a message.
public enum PublishOutcome: Sendable, Equatable {
    /// libmosquitto accepted the message with this message id; for QoS 1 the
    /// PUBACK is still to come (libmosquitto resends it after a reconnect).
    case queued(messageID: Int32)
    /// Not connected: nothing was queued. The core republishes retained state
    /// on the next `.connected`, so nothing retained is lost.
    case notConnected
    /// libmosquitto refused the message (bad topic, oversize payload, …).
    case rejected(MQTTError)
}
