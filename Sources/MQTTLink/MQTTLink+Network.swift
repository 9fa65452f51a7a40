#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import SpeakerSystem
import Synchronization

/// Who destroys the libmosquitto client when the link stops (`MQTTLink.ownership`).
enum NetworkOwnership {
    /// The network thread runs; `shutdown` will join it and destroy the client.
    static let running = 0
    /// The network thread has returned; `shutdown` joins and destroys.
    static let threadExited = 1
    /// `shutdown` gave up waiting (a connect was stuck); the thread destroys the client.
    static let abandoned = 2
}

extension MQTTLink {
    /// The network thread's whole life: connect, run `mosquitto_loop` while
    /// connected, and after every failure or loss wait the next
    /// `ReconnectBackoff` delay — on the `wake` eventfd, so `shutdown` ends
    /// the wait at once. A v5 CONNECT refused for its protocol version is
    /// retried at once as MQTT 3.1.1 (no properties; response topics are
    /// then unavailable). Runs on the network thread only.
    func runNetwork() {
        guard let mosq = client else { return }
        var backoff = ReconnectBackoff(minimumSeconds: settings.reconnectMinSeconds,
                                       maximumSeconds: settings.reconnectMaxSeconds)
        var fresh = true
        while !stopRequested.load(ordering: .acquiring) {
            let rc = fresh ? connectFresh(mosq) : mosquitto_reconnect(mosq)
            fresh = false
            if rc == .mosqSuccess {
                var loop = Int32.mosqSuccess
                // Once stopping, keep looping only while connected (so the
                // queued DISCONNECT is written); a pending connect is dropped.
                while loop == .mosqSuccess && !(stopRequested.load(ordering: .acquiring) && !isConnected) {
                    loop = mosquitto_loop(mosq, 1000, 1)
                }
            } else if !stopRequested.load(ordering: .acquiring) {
                logger.debug("connect to \(settings.host):\(settings.port) failed: \(MQTTError.text(for: rc))")
            }
            if stopRequested.load(ordering: .acquiring) { break }
            if established.exchange(false, ordering: .acquiringAndReleasing) { backoff.reset() }
            if fallbackRequested.exchange(false, ordering: .acquiringAndReleasing), protocolVersion == 5 {
                logger.warning("the broker refused MQTT v5; falling back to MQTT 3.1.1 (no response topics)")
                mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
                protocolLevel.store(4, ordering: .releasing)
                fresh = true
                continue
            }
            let delay = backoff.nextDelayMs()
            logger.debug("next connect attempt in \(delay) ms")
            if waitReadable(wake.fd, milliseconds: delay) { wake.drain() }
        }
        finishNetwork(mosq)
    }

    /// CONNECT with this link's properties: the Session Expiry Interval on
    /// v5, none on 3.1.1. libmosquitto keeps them for `mosquitto_reconnect`.
    private func connectFresh(_ mosq: OpaquePointer) -> Int32 {
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if protocolVersion == 5 {
            mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue),
                                         settings.sessionExpirySeconds)
        }
        return mosquitto_connect_bind_v5(mosq, settings.host, Int32(settings.port),
                                         Int32(settings.keepaliveSeconds), nil, properties)
    }

    /// Hands the client back: if `shutdown` is still waiting it joins and
    /// destroys it; if it gave up, this thread destroys it and drops the
    /// link's self-retain.
    private func finishNetwork(_ mosq: OpaquePointer) {
        if ownership.compareExchange(expected: NetworkOwnership.running, desired: NetworkOwnership.threadExited,
                                     ordering: .acquiringAndReleasing).exchanged {
            finished.signal()
        } else {
            mosquitto_destroy(mosq)
            Unmanaged.passUnretained(self).release()
        }
    }
}

/// pthread entry point of the network thread; `context` is a retained
/// `MQTTLink`, released here.
func networkThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    let link = Unmanaged<MQTTLink>.fromOpaque(context).takeRetainedValue()
    link.runNetwork()
    return nil
}
