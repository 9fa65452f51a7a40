// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// The MQTT connection as the MQTT service drives it: the libmosquitto link
/// (MQTTLink, tested against a real broker), or an in-memory client in the
/// runtime tests. Loop thread only.
public protocol MQTTClient: AnyObject {
    /// Readable when events are waiting (`drainEvents()`).
    var eventFD: Int32 { get }
    /// This process's id in the `publisher` user property of its publications.
    var instanceID: String { get }
    /// Starts connecting (and reconnecting) in the background.
    func start() throws(MQTTError)
    /// The events since the last drain, in order.
    func drainEvents() -> [MQTTEvent]
    /// Queue publications until `flush()` (one write for a dispatch's publications).
    func holdWrites()
    /// Write what `holdWrites()` held.
    func flush()
    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool, correlationData: [UInt8]?) -> PublishOutcome
    /// Longer reconnect delays while the core suspects a twin takes the session over.
    func setPatientReconnects(_ patient: Bool)
    /// How many QoS 1 publications still wait for their PUBACK.
    var unacknowledgedCount: Int { get }
    /// How many QoS 1 publications the broker has acknowledged so far: the
    /// closing handshake's measure of progress.
    var acknowledgedCount: Int { get }
    /// Whether the QoS 1 publication `publish` queued as `messageID` still
    /// waits for its PUBACK (false once the broker acknowledged it).
    func awaitsAcknowledgement(messageID: Int32) -> Bool
    /// While on, each PUBACK makes `eventFD` readable (a drain then has no
    /// event): the MQTT service turns it on while results wait for room in
    /// flight, and off again, so a PUBACK costs no wake-up otherwise.
    func wakeOnAcknowledgements(_ wake: Bool)
    /// Blocks until `eventFD` is readable or `timeoutMs` has passed; whether
    /// it became readable. For the closing handshake only, when the loop no
    /// longer runs: the MQTT service reads and answers what arrives until its
    /// last publications are acknowledged.
    func waitForEvents(timeoutMs: Int) -> Bool
    /// Publishes `finalPublish` (waiting at most `timeoutMs` for its
    /// acknowledgement), disconnects cleanly and stops the client. Nothing
    /// that arrives once the final wait is over is read: a command the
    /// broker sent meanwhile stays unacknowledged, and the broker delivers it
    /// again to the next connection of the same persistent session.
    @discardableResult
    func shutdown(finalPublish: (topic: String, payload: [UInt8], retain: Bool)?, timeoutMs: Int) -> MQTTShutdownOutcome
}

extension MQTTClient {
    /// A client that writes every publication at once has nothing to hold.
    public func holdWrites() {}
    /// A client that writes every publication at once has nothing to flush.
    public func flush() {}
    /// A client whose acknowledgements are events of their own needs no wake-up for them.
    public func wakeOnAcknowledgements(_ wake: Bool) {}
}

/// How an MQTT client's `shutdown` ended.
public enum MQTTShutdownOutcome: Equatable, Sendable {
    /// Never started, or already shut down: nothing to do.
    case notRunning
    /// The network thread stopped and the client was destroyed.
    case stopped
    /// The network thread was inside a blocking connect and did not stop in
    /// time: it was detached and frees the client when the connect returns.
    case abandonedConnect
}

/// A call of the MQTT client that failed: which function, its return code
/// and the words for it. Created on the thread that made the call.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The libmosquitto (or libc) function that failed, e.g. `mosquitto_tls_set`.
    public let function: String
    /// Its return code (`MOSQ_ERR_*`), or errno when `function` is a libc call.
    public let code: Int32
    /// Human-readable text for `code`.
    public let message: String

    /// A failure with its own message.
    public init(function: String, code: Int32, message: String) {
        self.function = function
        self.code = code
        self.message = message
    }

    public var description: String { "\(function) failed: \(message) (\(code))" }
}

/// Something that happened on the connection, produced on the client's
/// thread and handed to the loop by ``MQTTClient/drainEvents()``.
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

/// What ``MQTTClient/publish(topic:payload:qos:retain:correlationData:)`` did with a message.
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
