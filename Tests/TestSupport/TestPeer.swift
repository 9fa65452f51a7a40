// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CMosquitto

/// A libmosquitto MQTT v5 client for tests and benchmarks: the "server" or
/// "phone" side talking to the speaker through a `TestBroker`. It runs its
/// own libmosquitto network thread and records every message it receives;
/// the waiting helpers block on a condition variable with a timeout.
///
/// Call its methods from one thread (the test's). `@unchecked Sendable`:
/// everything the callbacks touch lives in `state` (a `Monitor`); `client`
/// is only used by the owning thread and by libmosquitto, which is
/// thread-safe for publish/subscribe once its loop thread runs.
public final class TestPeer: @unchecked Sendable {
    struct State {
        var connected = false
        var refusal: Int32? = nil
        var subscribed: Set<Int32> = []
        var inFlight: Set<Int32> = []
        var earlyAcks: Set<Int32> = []
        var messages: [ReceivedMessage] = []
        /// How many times `clear()` emptied `messages` (an incremental scan restarts).
        var clears = 0
    }

    /// Broker host.
    public let host: String
    /// Broker port.
    public let port: UInt16
    let state = Monitor(State())
    private var client: OpaquePointer?

    /// Creates a v5 client (not yet connected). `clientID` nil lets the
    /// broker assign one; `cleanStart` false with `sessionExpirySeconds` > 0
    /// gives a persistent session.
    public init(host: String = "127.0.0.1", port: UInt16, clientID: String? = nil,
                cleanStart: Bool = true, sessionExpirySeconds: UInt32 = 0,
                username: String? = nil, password: String? = nil) throws {
        self.host = host
        self.port = port
        self.sessionExpirySeconds = sessionExpirySeconds
        _ = TestPeer.libraryInit
        // The callbacks get the state, never the peer: a callback holding the peer
        // could drop its last reference on the loop thread, run deinit there, and
        // destroy the client under the running loop (a crash in mosquitto_loop).
        guard let mosq = mosquitto_new(clientID, cleanStart, Unmanaged.passUnretained(state).toOpaque()) else {
            throw TestSupportError("mosquitto_new", String(cString: strerror(errno)))
        }
        client = mosq
        mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1)
        if let username { mosquitto_username_pw_set(mosq, username, password) }
        mosquitto_connect_v5_callback_set(mosq, peerOnConnect)
        mosquitto_disconnect_v5_callback_set(mosq, peerOnDisconnect)
        mosquitto_message_v5_callback_set(mosq, peerOnMessage)
        mosquitto_publish_v5_callback_set(mosq, peerOnPublish)
        mosquitto_subscribe_v5_callback_set(mosq, peerOnSubscribe)
    }

    private let sessionExpirySeconds: UInt32
    private static let libraryInit: Int32 = mosquitto_lib_init()

    deinit { disconnect() }

    /// Connects (blocking TCP connect to the broker), starts the network
    /// thread and waits for the CONNACK.
    public func connect(timeout: Double = 5) throws {
        guard let mosq = client else { throw TestSupportError("connect", "peer already disconnected") }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if sessionExpirySeconds > 0 {
            mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), sessionExpirySeconds)
        }
        let rc = mosquitto_connect_bind_v5(mosq, host, Int32(port), 30, nil, properties)
        guard rc == 0 else { throw TestSupportError("mosquitto_connect_bind_v5", String(cString: mosquitto_strerror(rc))) }
        let loop = mosquitto_loop_start(mosq)
        guard loop == 0 else { throw TestSupportError("mosquitto_loop_start", String(cString: mosquitto_strerror(loop))) }
        let outcome = state.wait(timeout: timeout) { s -> Int32? in s.connected ? 0 : s.refusal }
        guard let outcome else { throw TestSupportError("connect", "no CONNACK within \(timeout) s") }
        guard outcome == 0 else { throw TestSupportError("connect", "refused: reason \(outcome)") }
    }

    /// Subscribes to a topic filter and waits for the SUBACK.
    public func subscribe(_ topic: String, qos: Int = 1, timeout: Double = 5) throws {
        guard let mosq = client else { throw TestSupportError("subscribe", "not connected") }
        var mid: Int32 = 0
        let rc = mosquitto_subscribe_v5(mosq, &mid, topic, Int32(qos), 0, nil)
        guard rc == 0 else { throw TestSupportError("mosquitto_subscribe_v5", String(cString: mosquitto_strerror(rc))) }
        let acked = state.wait(timeout: timeout) { s -> Bool? in s.subscribed.remove(mid) != nil ? true : nil }
        guard acked != nil else { throw TestSupportError("subscribe(\(topic))", "no SUBACK within \(timeout) s") }
    }

    /// Publishes; returns the message id. QoS 1 PUBACKs are tracked (see
    /// `waitForPublishes`). v5 Response Topic / Correlation Data optional.
    @discardableResult
    public func publish(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false,
                        responseTopic: String? = nil, correlationData: [UInt8]? = nil) throws -> Int32 {
        guard let mosq = client else { throw TestSupportError("publish", "not connected") }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if let responseTopic {
            mosquitto_property_add_string(&properties, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), responseTopic)
        }
        if let correlationData {
            _ = correlationData.withUnsafeBytes {
                mosquitto_property_add_binary(&properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue),
                                              $0.baseAddress, UInt16(clamping: $0.count))
            }
        }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes {
            mosquitto_publish_v5(mosq, &mid, topic, Int32($0.count), $0.baseAddress, Int32(qos), retain, properties)
        }
        guard rc == 0 else { throw TestSupportError("mosquitto_publish_v5", String(cString: mosquitto_strerror(rc))) }
        state.update { s in
            if s.earlyAcks.remove(mid) == nil && qos > 0 { s.inFlight.insert(mid) }
        }
        return mid
    }

    /// Publishes a UTF-8 string payload.
    @discardableResult
    public func publish(topic: String, string: String, qos: Int = 1, retain: Bool = false,
                        responseTopic: String? = nil, correlationData: [UInt8]? = nil) throws -> Int32 {
        try publish(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain,
                    responseTopic: responseTopic, correlationData: correlationData)
    }

    /// Waits until every QoS 1 publish has its PUBACK; false on timeout.
    @discardableResult
    public func waitForPublishes(timeout: Double = 5) -> Bool {
        state.wait(timeout: timeout) { s -> Bool? in s.inFlight.isEmpty ? true : nil } ?? false
    }

    /// The first message received on `topic` (exact match) that satisfies
    /// `predicate`, including messages that arrived before the call; waits up
    /// to `timeout` seconds for one. `clear()` forgets earlier messages.
    public func waitForMessage(topic: String, timeout: Double = 5,
                               where predicate: (ReceivedMessage) -> Bool = { _ in true }) -> ReceivedMessage? {
        // Each wake-up checks only the messages that arrived since the last
        // one (a predicate is a pure test of one message): a long wait over
        // thousands of messages costs linear, not quadratic, time — under
        // qemu-user the quadratic re-scan of JSON payloads outran the timeout.
        var scanned = (clears: -1, count: 0)
        return state.wait(timeout: timeout) { s in
            if scanned.clears != s.clears { scanned = (s.clears, 0) }
            let fresh = s.messages[scanned.count...]
            scanned.count = s.messages.count
            return fresh.first { $0.topic == topic && predicate($0) }
        }
    }

    /// Every message received on `topic` so far, oldest first.
    public func messages(on topic: String) -> [ReceivedMessage] {
        state.read { $0.messages.filter { $0.topic == topic } }
    }

    /// Every message received so far, oldest first.
    public var allMessages: [ReceivedMessage] { state.read { $0.messages } }

    /// Waits up to `timeout` seconds until `check` over every message so far returns non-nil.
    public func wait<R>(timeout: Double, until check: ([ReceivedMessage]) -> R?) -> R? {
        state.wait(timeout: timeout) { s in check(s.messages) }
    }

    /// Forgets every received message.
    public func clear() {
        state.update { s in
            s.messages.removeAll()
            s.clears += 1
        }
    }

    /// Whether the broker accepted the connection and it has not dropped since.
    public var isConnected: Bool { state.read { $0.connected } }

    /// The peer's socket (to exclude it from `ConnectionSabotage`), or -1.
    public var socketFD: Int32 { client.map { mosquitto_socket($0) } ?? -1 }

    /// Waits for outstanding PUBACKs (up to `timeout`), disconnects cleanly,
    /// stops the network thread and frees the client. Idempotent.
    public func disconnect(timeout: Double = 5) {
        guard let mosq = client else { return }
        if isConnected { waitForPublishes(timeout: timeout) }
        mosquitto_disconnect_v5(mosq, 0, nil)
        mosquitto_loop_stop(mosq, false)
        mosquitto_destroy(mosq)
        client = nil
        state.update { $0.connected = false }
    }
}

/// The peer's state from a callback's userdata (kept alive by the peer until
/// its client is destroyed, after the loop thread has been joined).
private func peerState(_ userdata: UnsafeMutableRawPointer?) -> Monitor<TestPeer.State>? {
    userdata.map { Unmanaged<Monitor<TestPeer.State>>.fromOpaque($0).takeUnretainedValue() }
}

private func peerOnConnect(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32,
                           _ flags: Int32, _ properties: OpaquePointer?) {
    peerState(userdata)?.update { s in
        if rc == 0 { s.connected = true } else { s.refusal = rc }
    }
}

private func peerOnDisconnect(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32,
                              _ properties: OpaquePointer?) {
    peerState(userdata)?.update { $0.connected = false }
}

private func peerOnPublish(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32,
                           _ reason: Int32, _ properties: OpaquePointer?) {
    peerState(userdata)?.update { s in
        if s.inFlight.remove(mid) == nil {
            if s.earlyAcks.count > 1024 { s.earlyAcks.removeAll() }
            s.earlyAcks.insert(mid)
        }
    }
}

private func peerOnSubscribe(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32,
                             _ count: Int32, _ grantedQoS: UnsafePointer<Int32>?, _ properties: OpaquePointer?) {
    peerState(userdata)?.update { _ = $0.subscribed.insert(mid) }
}

private func peerOnMessage(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
                           _ raw: UnsafePointer<mosquitto_message>?, _ properties: OpaquePointer?) {
    let now = Monotonic.nanoseconds()
    guard let state = peerState(userdata), let raw, let topic = raw.pointee.topic else { return }
    var payload: [UInt8] = []
    if raw.pointee.payloadlen > 0, let bytes = raw.pointee.payload {
        payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(raw.pointee.payloadlen)))
    }
    var responseTopic: String? = nil
    var text: UnsafeMutablePointer<CChar>? = nil
    if mosquitto_property_read_string(properties, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false) != nil, let text {
        responseTopic = String(cString: text)
        free(text)
    }
    var correlation: [UInt8]? = nil
    var binary: UnsafeMutableRawPointer? = nil
    var length: UInt16 = 0
    if mosquitto_property_read_binary(properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &binary, &length, false) != nil {
        correlation = binary.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
        free(binary)
    }
    let message = ReceivedMessage(topic: String(cString: topic), payload: payload, qos: Int(raw.pointee.qos),
                                  retain: raw.pointee.retain, responseTopic: responseTopic,
                                  correlationData: correlation, receivedAtNanoseconds: now)
    state.update { $0.messages.append(message) }
}
