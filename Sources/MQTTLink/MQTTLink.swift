// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import SpeakerSystem
import Synchronization
import SpeakerPorts

/// The speaker's MQTT connection, over libmosquitto (MQTT v5 with a 3.1.1
/// fallback, persistent session, last will, TLS, credentials) with its own
/// reconnect schedule (`ReconnectBackoff`: 0.5 s … 30 s, jittered).
///
/// Threads: `start`, `publish`, `drainEvents`, `holdWrites`, `flush` and
/// `shutdown` are called from the main loop's thread (one thread). The
/// link's own network thread (`MQTTLink+Network`) connects (DNS, TCP and TLS
/// may block there), waits for the CONNACK, waits out the backoff and serves
/// the socket during `shutdown`. Once the broker has accepted the connection
/// it lends the socket to the main thread and parks (`MQTTLink+Owner`): the
/// main loop polls `eventFD` (an epoll set of the mailbox, the socket and a
/// 1 s keepalive timer) and `drainEvents()` reads the socket itself, so a
/// command is read, reduced and answered on one thread with no hand-off.
/// A lost connection goes back to the network thread, which
/// reconnects. libmosquitto runs the callbacks on whichever thread owns the
/// socket; they only post events to a mutex-protected queue and write an
/// eventfd (plus re-subscribing on connect). libmosquitto is in threaded
/// mode, so `publish` only queues; the owner writes (the main thread at once,
/// or at `flush()` after `holdWrites()`; the network thread when woken).
/// Nothing on the main thread waits on the network: its socket is
/// non-blocking.
///
/// Lifetime: `start()` retains the link (libmosquitto holds it as userdata)
/// until `shutdown()`, so a started link must be shut down to be freed. If
/// the network thread is stuck in a TCP/TLS connect when `shutdown` gives
/// up, the thread is left to finish and frees the client itself.
///
/// State: a handful of values, one per concern (`MQTTLinkState`). The
/// `let`s are what threads share: `mailbox` and `tracker` (Mutex +
/// eventfd), `status`, `network` and `handover` (atomics, mutexes,
/// eventfds) and immutable values (`settings`, `clock`). The `var`s each
/// have one thread: `batch` and `lifetime` the main thread's, `ownerSocket`
/// the socket owner's (handed over under `handover.lock`).
///
/// `@unchecked Sendable` because the callbacks reach this object from the
/// network thread through the C userdata pointer, and they touch only the
/// shared `let`s. The network thread gets the client as a `ClientHandle`
/// when it starts and never reads `lifetime`; the thread that ends last
/// (decided by `network.ownership`) destroys the client. The client's socket
/// is used by one thread at a time, the one `handover.owner` names.
public final class MQTTLink: @unchecked Sendable {
    /// The settings this link was created with: broker, identity, will, subscriptions, reconnect bounds.
    public let settings: MQTTSettings
    let logger: Logger
    /// Monotonic nanoseconds (CLOCK_MONOTONIC in the daemon, the keepalive
    /// timerfd's clock): the one time the link reads, on the main and the
    /// network thread, for the keepalive tick and `shutdown`'s deadline.
    let clock: @Sendable () -> UInt64
    /// A random id of this process's link, sent as the MQTT v5 user property
    /// `publisher` on every publication, so the speaker can tell its own
    /// retained messages from another client's that uses the same client id.
    public let instanceID: String
    /// Events from the callbacks to the main loop.
    let mailbox: EventMailbox<MQTTEvent>
    /// QoS 1 publications waiting for their PUBACK.
    let tracker: PublishTracker
    /// What the callbacks and the network thread learn about the connection.
    let status = ConnectionStatus()
    /// The network thread's wake-ups, stop and reconnect policy.
    let network: NetworkThreadControl
    /// Which thread drives the socket, and the epoll set the main loop polls.
    let handover: SocketHandover
    /// The socket owner's own state (watched output, keepalive tick).
    var ownerSocket = OwnerSocketState()
    /// How the main thread batches publications. Main thread.
    var batch = PublishBatch()
    /// The client, the network thread and the self-retain. Main thread.
    private(set) var lifetime = ClientLifetime()

    /// Creates a stopped link. Cheap; makes no network calls. `clock` gives
    /// monotonic nanoseconds (live: `MonotonicClock.now`); it is read on the
    /// main and the network thread. Any thread.
    public init(settings: MQTTSettings, logger: Logger, clock: @escaping @Sendable () -> UInt64) throws(MQTTError) {
        self.settings = settings
        self.logger = logger
        self.clock = clock
        self.mailbox = try EventMailbox()
        self.tracker = try PublishTracker(clock: clock)
        self.network = NetworkThreadControl(wake: try makeEventFD(), finished: try makeEventFD())
        self.handover = SocketHandover(readiness: try ReadinessSet(mailbox: mailbox.fd))
        var random = SystemRandomNumberGenerator()
        self.instanceID = String(random.next() as UInt64, radix: 16)
    }

    deinit {
        mosquitto_property_free_all(&batch.publisherProperties)
    }

    /// Readable (POLLIN) while events are pending or the socket the main
    /// thread owns needs it; poll it from the main loop and call
    /// `drainEvents()`. Stays valid for the link's lifetime.
    public var eventFD: Int32 { handover.readiness.fd }

    /// QoS 1 publications still waiting for their PUBACK. Any thread.
    public var unacknowledgedCount: Int { tracker.pendingCount }
    public var acknowledgedCount: Int { tracker.acknowledgedCount }
    public func awaitsAcknowledgement(messageID: Int32) -> Bool { tracker.isPending(messageID) }
    public func wakeOnAcknowledgements(_ wake: Bool) { tracker.wakesMainLoop.store(wake, ordering: .releasing) }

    /// Waits for `eventFD` (poll(2)); the closing handshake's wait. Main thread.
    public func waitForEvents(timeoutMs: Int) -> Bool { waitReadable(eventFD, milliseconds: timeoutMs) }

    /// Whether the broker has accepted the connection and it has not dropped
    /// since. Any thread.
    public var isConnected: Bool { status.connected.load(ordering: .acquiring) }

    /// The MQTT protocol level in use: 5, or 4 (3.1.1) after the broker
    /// refused v5. Any thread.
    public var protocolVersion: Int { status.protocolLevel.load(ordering: .acquiring) }

    /// Makes every reconnect wait 2–5 s (jittered) at least, or stops that.
    /// The core decides (`BrokerHealth.takeoverSuspected`): two clients with
    /// one id that reconnect at once take each other over forever. Main thread.
    public func setPatientReconnects(_ patient: Bool) {
        if network.patientReconnects.exchange(patient, ordering: .acquiringAndReleasing) != patient {
            logger.debug(patient ? "reconnecting patiently (2–5 s)" : "reconnecting on the normal schedule")
        }
    }

    /// Serves the socket when the main thread owns it (reads what arrived,
    /// keeps the connection alive), then takes every pending event, oldest
    /// first. What the reading queued (PUBACKs) is written now, or with the
    /// answers at `flush()` after `holdWrites()`. Logs only at debug: the
    /// core decides what to say about `.problem` (`BrokerHealth`). Main thread.
    public func drainEvents() -> [MQTTEvent] {
        serviceOnMain()
        let events = mailbox.drain()
        if !batch.holding { writeNow(cork: false) }
        for event in events {
            switch event {
            case .connected(let sessionPresent):
                logger.debug("CONNACK from \(settings.host):\(settings.port) (session present: \(sessionPresent)); subscriptions re-sent")
            case .problem(let problem):
                logger.debug("not connected: \(problem)")
            case .disconnected, .message:
                break
            }
        }
        return events
    }

    /// From now until `flush()`, publications (and the PUBACKs of what
    /// `drainEvents` reads) are queued and leave together at `flush()`: a
    /// command's acknowledgement, the state it changed and its result in one
    /// TCP segment. Main thread.
    public func holdWrites() {
        batch.holding = true
    }

    /// Writes what `holdWrites()` held (nothing to do when the network thread
    /// owns the socket: it was woken for each publication). Main thread.
    public func flush() {
        batch.holding = false
        writeNow(cork: batch.heldPublications)
        batch.heldPublications = false
    }

    /// Writes what is queued if the main thread owns the socket; a failed
    /// write hands the client back to the network thread. Main thread.
    private func writeNow(cork: Bool) {
        guard let mosq = lifetime.client, mainOwnsSocket else { return }
        let rc = writeOnMain(mosq, cork: cork)
        if rc != .mosqSuccess { giveBack(rc, errno) }
    }

    /// Creates the libmosquitto client, applies the settings (protocol v5,
    /// threaded mode, TCP_NODELAY, credentials, TLS, will), then starts the
    /// network thread, which connects (the CONNECT carries the Session Expiry
    /// Interval; DNS, TCP and TLS can block there, never here) and retries
    /// forever on the backoff schedule. A broker that is down does not make
    /// this fail or block. Main thread; call once.
    public func start() throws(MQTTError) {
        guard lifetime.client == nil else {
            throw MQTTError(function: "MQTTLink.start", code: Int32(MOSQ_ERR_INVAL.rawValue), message: "already started")
        }
        let initialised = MosquittoLibrary.initialised
        guard initialised == .mosqSuccess else { throw MQTTError(function: "mosquitto_lib_init", code: initialised) }

        let unmanaged = Unmanaged.passRetained(self)
        guard let mosq = mosquitto_new(settings.clientID, false, unmanaged.toOpaque()) else {
            let code = errno
            unmanaged.release()
            throw MQTTError(function: "mosquitto_new", code: code, message: String(cString: strerror(code)))
        }
        do {
            try configure(mosq)
        } catch {
            mosquitto_destroy(mosq)
            unmanaged.release()
            throw error
        }
        lifetime.client = mosq
        lifetime.retainedSelf = unmanaged
        logConfiguration()

        do throws(SystemError) {
            let handle = ClientHandle(mosq: mosq)
            lifetime.networkThread = try OSThread.start(name: "mqtt-network") { _ in self.runNetwork(handle) }
        } catch {
            lifetime.client = nil
            lifetime.retainedSelf = nil
            mosquitto_destroy(mosq)
            unmanaged.release()
            throw MQTTError(system: error)
        }
    }

    /// Publishes a message. QoS 0 or 1; `correlationData` adds the MQTT v5
    /// Correlation Data property (for replies to a Response Topic). Returns
    /// `.notConnected` without queueing while the broker has not accepted the
    /// connection. Never blocks on the network: written at once (non-blocking)
    /// or at `flush()` after `holdWrites()` when the main thread owns the
    /// socket, else by the network thread. Main thread.
    public func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool,
                        correlationData: [UInt8]? = nil) -> PublishOutcome {
        guard let mosq = lifetime.client, isConnected else { return .notConnected }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if protocolVersion == 5 && correlationData == nil && batch.publisherProperties == nil {
            mosquitto_property_add_string_pair(&batch.publisherProperties, Int32(MQTT_PROP_USER_PROPERTY.rawValue),
                                               "publisher", instanceID)
        } else if protocolVersion == 5 && correlationData != nil {
            mosquitto_property_add_string_pair(&properties, Int32(MQTT_PROP_USER_PROPERTY.rawValue), "publisher", instanceID)
        }
        if let correlationData, protocolVersion == 5 {
            let rc = correlationData.withUnsafeBytes { bytes in
                mosquitto_property_add_binary(&properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue),
                                              bytes.baseAddress, UInt16(clamping: bytes.count))
            }
            guard rc == .mosqSuccess else {
                return .rejected(MQTTError(function: "mosquitto_property_add_binary", code: rc))
            }
        }
        var mid: Int32 = 0
        let chosen = protocolVersion == 5 && correlationData == nil ? batch.publisherProperties : properties
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(mosq, &mid, topic, Int32(bytes.count), bytes.baseAddress,
                                 Int32(qos), retain, chosen)
        }
        switch rc {
        case .mosqSuccess:
            tracker.published(messageID: mid, qos: qos)
            if mainOwnsSocket {
                if batch.holding { batch.heldPublications = true } else { writeNow(cork: false) }
            } else {
                network.wake.signal()  // the network thread polls; this makes it write now
            }
            return .queued(messageID: mid)
        case Int32(MOSQ_ERR_NO_CONN.rawValue):
            return .notConnected
        default:
            return .rejected(MQTTError(function: "mosquitto_publish_v5", code: rc))
        }
    }

    /// Stops the link: publishes `finalPublish` at QoS 1 (the speaker's
    /// `availability` = `offline`) if connected, waits for its PUBACK and for
    /// other in-flight QoS 1 PUBACKs until `timeoutMs` has passed, then
    /// disconnects cleanly (so the broker discards the will), stops the
    /// network thread and destroys the client. Main thread; blocks at most
    /// about `timeoutMs` in all (at least 200 ms for the thread to stop): a
    /// connect still in progress is abandoned, not waited for. Safe to call
    /// twice. Returns what it did, so a caller (and a test) can tell a clean
    /// stop from an abandoned connect without timing it. Without
    /// `finalPublish` nothing more is read from the socket, only the
    /// DISCONNECT written: a command the broker sent meanwhile stays
    /// unacknowledged and is delivered again to the persistent session's
    /// next connection (the MQTT service has answered everything before).
    @discardableResult
    public func shutdown(finalPublish: (topic: String, payload: [UInt8], retain: Bool)?,
                         timeoutMs: Int) -> ShutdownOutcome {
        guard let mosq = lifetime.client else { return .notRunning }
        let deadline = milliseconds() + timeoutMs
        // Without a final message the caller has already had its last
        // publications acknowledged (the MQTT service's closing handshake):
        // from here nothing is read, so no command is acknowledged unanswered.
        let quiet = finalPublish == nil
        if quiet { network.stopRequested.store(true, ordering: .releasing) }
        // From here the network thread serves the socket (the PUBACKs waited for below, the DISCONNECT).
        batch.holding = false
        takeBack(result: (Int32(MOSQ_ERR_SUCCESS.rawValue), 0), closing: true)
        if let finalPublish {
            switch publish(topic: finalPublish.topic, payload: finalPublish.payload, qos: 1, retain: finalPublish.retain) {
            case .queued(let mid):
                if tracker.wait(deadline: deadline, until: { !tracker.isPending(mid) }) {
                    logger.info("final message on \(finalPublish.topic) acknowledged")
                } else {
                    logger.warning("no PUBACK for the final message on \(finalPublish.topic) within \(timeoutMs) ms")
                }
            case .notConnected:
                logger.warning("not connected; final message on \(finalPublish.topic) not sent (the will covers it)")
            case .rejected(let error):
                logger.warning("final message on \(finalPublish.topic) rejected: \(error)")
            }
        }
        if !quiet && isConnected && !tracker.wait(deadline: deadline, until: { tracker.pendingCount == 0 }) {
            logger.warning("\(tracker.pendingCount) QoS 1 message(s) unacknowledged at shutdown")
        }
        network.stopRequested.store(true, ordering: .releasing)
        let rc = mosquitto_disconnect_v5(mosq, 0, nil)
        if rc != .mosqSuccess && rc != Int32(MOSQ_ERR_NO_CONN.rawValue) {
            logger.warning("mosquitto_disconnect_v5: \(MQTTError.text(for: rc))")
        }
        network.wake.signal()
        if let thread = lifetime.networkThread {
            let remaining = max(200, deadline - milliseconds())
            if waitReadable(network.finished.fd, milliseconds: remaining) {
                thread.join()
            } else if network.ownership.compareExchange(expected: NetworkOwnership.running, desired: NetworkOwnership.abandoned,
                                                ordering: .acquiringAndReleasing).exchanged {
                // Stuck in a connect (DNS, TCP SYN retries, TLS): leave it; it frees the client when it returns.
                logger.warning("the network thread is still connecting; leaving it to finish on its own")
                thread.detach()
                lifetime.networkThread = nil
                lifetime.client = nil
                status.connected.store(false, ordering: .releasing)
                mosquitto_property_free_all(&batch.publisherProperties)
                lifetime.retainedSelf = nil  // the self-retain now belongs to the network thread
                return .abandonedConnect
            } else {
                thread.join()
            }
            lifetime.networkThread = nil
        }
        mosquitto_destroy(mosq)
        lifetime.client = nil
        status.connected.store(false, ordering: .releasing)
        mosquitto_property_free_all(&batch.publisherProperties)
        lifetime.retainedSelf?.release()
        lifetime.retainedSelf = nil
        return .stopped
    }

    /// `clock` in milliseconds, for `shutdown`'s deadline.
    private func milliseconds() -> Int { Int(clock() / 1_000_000) }

    /// Applies every setting to a fresh client. Main thread, before connecting.
    private func configure(_ mosq: OpaquePointer) throws(MQTTError) {
        func check(_ function: String, _ rc: Int32) throws(MQTTError) {
            guard rc == .mosqSuccess else { throw MQTTError(function: function, code: rc) }
        }
        try check("mosquitto_int_option(PROTOCOL_VERSION)",
                  mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5))
        try check("mosquitto_int_option(TCP_NODELAY)", mosquitto_int_option(mosq, MOSQ_OPT_TCP_NODELAY, 1))
        try check("mosquitto_threaded_set", mosquitto_threaded_set(mosq, true))
        if let username = settings.username {
            try check("mosquitto_username_pw_set", mosquitto_username_pw_set(mosq, username, settings.password))
        }
        if let tls = settings.tls {
            try check("mosquitto_tls_set", mosquitto_tls_set(mosq, tls.caFile, nil, tls.certFile, tls.keyFile, nil))
        }
        if let will = settings.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(mosq, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain)
            }
            try check("mosquitto_will_set", rc)
        }
        mosquitto_connect_v5_callback_set(mosq, linkOnConnect)
        mosquitto_disconnect_v5_callback_set(mosq, linkOnDisconnect)
        mosquitto_message_v5_callback_set(mosq, linkOnMessage)
        mosquitto_publish_v5_callback_set(mosq, linkOnPublish)
        mosquitto_log_callback_set(mosq, linkOnLog)
    }

    /// Logs the resolved configuration once (never the password).
    private func logConfiguration() {
        let s = settings
        var parts = ["broker \(s.host):\(s.port)", "client id \(s.clientID)", "MQTT v5 (3.1.1 fallback)",
                     "keepalive \(s.keepaliveSeconds) s", "session expiry \(s.sessionExpirySeconds) s",
                     "maximum packet \(s.maximumPacketSize == 0 ? "unlimited" : "\(s.maximumPacketSize) bytes")",
                     "reconnect \(s.reconnectMinSeconds)…\(s.reconnectMaxSeconds) s jittered"]
        if let user = s.username { parts.append("user \(user)" + (s.password == nil ? "" : " (password set)")) }
        if let tls = s.tls {
            parts.append("TLS ca \(tls.caFile)" + (tls.certFile.map { " cert \($0)" } ?? ""))
        } else {
            parts.append("no TLS")
        }
        if let will = s.will { parts.append("will on \(will.topic) (qos \(will.qos), retain \(will.retain))") }
        parts.append("subscriptions \(s.subscriptions)")
        logger.info(parts.joined(separator: ", "))
        if s.sendsPasswordInClear {
            logger.warning("the broker password goes to \(s.host):\(s.port) without TLS: anyone on the path can read it and log in as this speaker"
                           + " (set mqtt.tls with the broker's CA and use port 8883; docs/broker-security.md)")
        }
    }
}
