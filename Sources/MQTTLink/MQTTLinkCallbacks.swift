// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import Synchronization
import SpeakerPorts

// libmosquitto callbacks. They run on the link's network thread (inside mosquitto_loop), so they
// are plain global functions (no actor isolation, no captures) and reach the
// link through the userdata pointer set in `mosquitto_new`. The link keeps
// itself retained while the client exists, so the pointer is always valid
// here. They only post events (and re-subscribe on connect): no logging, no
// blocking.

/// Borrows the `MQTTLink` behind libmosquitto's userdata pointer.
private func link(_ userdata: UnsafeMutableRawPointer?) -> MQTTLink? {
    guard let userdata else { return nil }
    return Unmanaged<MQTTLink>.fromOpaque(userdata).takeUnretainedValue()
}

/// on_connect (v5): on success re-subscribe every topic at QoS 1 — the broker
/// may have lost the session — then report `.connected`.
func linkOnConnect(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32,
                   _ flags: Int32, _ properties: OpaquePointer?) {
    guard let link = link(userdata) else { return }
    guard rc == 0 else {
        link.status.lastRefusal.store(rc, ordering: .releasing)
        // 132 = v5 "Unsupported Protocol Version"; libmosquitto 2.0.11 also maps a
        // 3.1.1 broker's "unacceptable protocol version" CONNACK to it (2.0.12
        // and later do not call on_connect for it: see noticeV311Refusal).
        if rc == Int32(MQTT_RC_UNSUPPORTED_PROTOCOL_VERSION.rawValue) || rc == 1 {
            link.status.fallbackRequested.store(true, ordering: .releasing)
        }
        return
    }
    for topic in link.settings.subscriptions {
        mosquitto_subscribe_v5(mosq, nil, topic, 1, 0, nil)
    }
    // Connected: stop libmosquitto's logging, which formats a line (malloc +
    // vsnprintf) for every packet sent or received even though only errors
    // during an attempt are kept. The network thread sets it again before the next attempt.
    mosquitto_log_callback_set(mosq, nil)
    link.status.connected.store(true, ordering: .releasing)
    link.status.established.store(true, ordering: .releasing)
    // Announced by the network thread once the main thread owns the socket
    // (`announceConnected`), so that what the core publishes on connecting
    // is held and leaves in one write, not partly from each thread.
    link.status.pendingConnected.store(flags & 1 != 0 ? 1 : 0, ordering: .releasing)
}

/// on_disconnect (v5): if the connection had been established, report its
/// end and why (`rc` is a broker DISCONNECT reason or a `MOSQ_ERR_*`; errno
/// is still the failing call's here). libmosquitto also calls this when an
/// attempt fails before CONNACK: that is reported by the network thread as a
/// `.problem`, never as a disconnect. The network thread reconnects.
func linkOnDisconnect(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32,
                      _ properties: OpaquePointer?) {
    let savedErrno = errno
    guard let link = link(userdata), link.status.connected.exchange(false, ordering: .acquiringAndReleasing) else { return }
    link.announceConnected()  // lost before it was lent: the core hears of the connection first
    link.mailbox.post(.disconnected(reason: rc))
    if rc != 0 && !link.network.stopRequested.load(ordering: .acquiring) {
        link.mailbox.post(.problem(MQTTReasons.lossProblem(code: rc, savedErrno: savedErrno)))
    }
}

/// on_log: keeps the first error-level line of the current attempt (how
/// libmosquitto reports OpenSSL's reason for a failed TLS handshake).
func linkOnLog(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ level: Int32,
               _ text: UnsafePointer<CChar>?) {
    guard level == Int32(MOSQ_LOG_ERR), let link = link(userdata), let text else { return }
    let line = String(cString: text)
    link.status.libraryError.withLock { if $0 == nil { $0 = line } }
}

/// on_publish (v5): the PUBACK (QoS 1) or the write (QoS 0) of `mid`.
func linkOnPublish(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32,
                   _ reasonCode: Int32, _ properties: OpaquePointer?) {
    guard let link = link(userdata) else { return }
    if link.tracker.acknowledged(messageID: mid) && link.tracker.wakesMainLoop.load(ordering: .acquiring) {
        link.mailbox.nudge()  // the main loop drains (no event) and learns which results were delivered
    }
}

/// on_message (v5): copy topic, payload and the Response Topic / Correlation
/// Data properties out of libmosquitto's buffers.
func linkOnMessage(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
                   _ message: UnsafePointer<mosquitto_message>?, _ properties: OpaquePointer?) {
    guard let link = link(userdata), let message = decodeMessage(message, properties) else { return }
    link.mailbox.post(.message(message))
}

/// Converts a libmosquitto message and its v5 properties into `MQTTMessage`.
/// Any thread.
func decodeMessage(_ raw: UnsafePointer<mosquitto_message>?, _ properties: OpaquePointer?) -> MQTTMessage? {
    guard let raw, let topicPointer = raw.pointee.topic else { return nil }
    let length = Int(raw.pointee.payloadlen)
    var payload: [UInt8] = []
    if length > 0, let bytes = raw.pointee.payload {
        payload = Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }
    var responseTopic: String? = nil
    var text: UnsafeMutablePointer<CChar>? = nil
    if mosquitto_property_read_string(properties, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &text, false) != nil,
       let text {
        responseTopic = String(cString: text)
        free(text)
    }
    var correlationData: [UInt8]? = nil
    var binary: UnsafeMutableRawPointer? = nil
    var binaryLength: UInt16 = 0
    if mosquitto_property_read_binary(properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue),
                                      &binary, &binaryLength, false) != nil {
        correlationData = binary.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(binaryLength))) } ?? []
        free(binary)
    }
    var publisher: String? = nil
    var name: UnsafeMutablePointer<CChar>? = nil
    var value: UnsafeMutablePointer<CChar>? = nil
    if mosquitto_property_read_string_pair(properties, Int32(MQTT_PROP_USER_PROPERTY.rawValue), &name, &value, false) != nil {
        if let name, let value, String(cString: name) == "publisher" { publisher = String(cString: value) }
        free(name)
        free(value)
    }
    var message = MQTTMessage(topic: String(cString: topicPointer), payload: payload, qos: Int(raw.pointee.qos),
                              retain: raw.pointee.retain, responseTopic: responseTopic, correlationData: correlationData)
    message.publisher = publisher
    return message
}
