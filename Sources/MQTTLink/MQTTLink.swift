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
/// command is read, reduced and answered on one thread with no hand-off
/// (issue 13). A lost connection goes back to the network thread, which
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
/// `@unchecked Sendable` because the callbacks reach this object from the
/// network thread through the C userdata pointer. What they touch is
/// thread-safe: `mailbox` and `tracker` (Mutex + eventfd), the atomics, and
/// immutable `let`s (`settings`). `client` is written only by `start` before
/// the network thread exists and read-only afterwards; the thread that ends
/// last (decided by `ownership`) destroys it. The client's socket is used by
/// one thread at a time, the one `owner` names (changed under `handover`).
public final class MQTTLink: @unchecked Sendable {
    /// The settings this link was created with.
    public let settings: MQTTSettings
    let logger: Logger
    let mailbox: EventMailbox<MQTTEvent>
    let tracker: PublishTracker
    let connected = Atomic<Bool>(false)
    /// The CONNACK reason of the last refused connection (0 when none), for logging.
    let lastRefusal = Atomic<Int32>(0)
    /// Set when a v5 CONNECT was refused for its protocol version (on_connect, or the peeked 3.1.1 CONNACK: `noticeV311Refusal`).
    let fallbackRequested = Atomic<Bool>(false)
    /// Set by on_connect on success; the network thread resets the backoff.
    let established = Atomic<Bool>(false)
    /// The sessionPresent flag (0/1) of a CONNACK not yet announced as
    /// `.connected`, or -1 (`announceConnected`).
    let pendingConnected = Atomic<Int>(-1)
    /// Set by the main thread while the core suspects that another client
    /// with the same client id keeps taking the session over: every
    /// reconnect then waits at least `patientDelayMs`.
    let patientReconnects = Atomic<Bool>(false)
    /// The least wait before a reconnect while `patientReconnects` is set.
    static let patientDelayMs = 2_000...5_000
    /// The first error line libmosquitto logged during the current attempt
    /// (OpenSSL's reason when TLS fails); reset before each attempt.
    let libraryError = Mutex<String?>(nil)
    /// 5 for MQTT v5, 4 for 3.1.1 after a fallback.
    let protocolLevel = Atomic<Int>(5)
    /// Set by `shutdown`; the network thread stops at its next step.
    let stopRequested = Atomic<Bool>(false)
    /// Wakes the network thread out of a backoff wait.
    let wake: EventFD
    /// Signalled by the network thread as it exits.
    let finished: EventFD
    /// Who frees the client: `running`, then `threadExited` or `abandoned`.
    let ownership = Atomic<Int>(NetworkOwnership.running)
    /// A random id of this process's link, sent as the MQTT v5 user property
    /// `publisher` on every publication, so the speaker can tell its own
    /// retained messages from another client's that uses the same client id.
    public let instanceID: String
    /// What the main loop polls (`eventFD`).
    let readiness: ReadinessSet
    /// Which thread drives the socket: `SocketOwner.network` or `.main`.
    let owner = Atomic<Int>(SocketOwner.network)
    /// Held while the owner changes; true once `shutdown` has begun (never lent again).
    let handover = Mutex<Bool>(false)
    /// How the main thread's ownership ended: the libmosquitto result and errno of a loss, or success.
    let returned = Mutex<(Int32, Int32)>((0, 0))
    /// Main thread (while it owns the socket): EPOLLOUT is watched because the socket did not take everything.
    var watchingOutput = false
    /// Main thread: publications are queued until `flush()` (`holdWrites()`).
    var holding = false
    /// Main thread (while it owns the socket): no keepalive tick before this
    /// monotonic instant (ns), see `clearKeepaliveTick`.
    var keepaliveDue: UInt64 = 0
    /// The keepalive timer's period.
    static let keepaliveTickNs: UInt64 = 1_000_000_000
    /// Main thread: a publication was queued while holding, so `flush()` has
    /// several packets to send and corks them (else at most a PUBACK).
    var heldPublications = false
    /// The MQTT v5 properties of every publication without correlation data
    /// (the `publisher` user property), built at the first publish and
    /// reused: libmosquitto copies them into each message. Main thread.
    private var publisherProperties: OpaquePointer?
    private(set) var client: OpaquePointer?
    private var networkThread: pthread_t?
    private var retainedSelf: Unmanaged<MQTTLink>?

    /// Creates a stopped link. Cheap; makes no network calls. Any thread.
    public init(settings: MQTTSettings, logger: Logger) throws(MQTTError) {
        self.settings = settings
        self.logger = logger
        self.mailbox = try EventMailbox()
        self.tracker = try PublishTracker()
        self.wake = try makeEventFD()
        self.finished = try makeEventFD()
        self.readiness = try ReadinessSet(mailbox: mailbox.fd)
        var random = SystemRandomNumberGenerator()
        self.instanceID = String(random.next() as UInt64, radix: 16)
    }

    deinit {
        mosquitto_property_free_all(&publisherProperties)
    }

    /// Readable (POLLIN) while events are pending or the socket the main
    /// thread owns needs it; poll it from the main loop and call
    /// `drainEvents()`. Stays valid for the link's lifetime.
    public var eventFD: Int32 { readiness.fd }

    /// Whether the broker has accepted the connection and it has not dropped
    /// since. Any thread.
    public var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// The MQTT protocol level in use: 5, or 4 (3.1.1) after the broker
    /// refused v5. Any thread.
    public var protocolVersion: Int { protocolLevel.load(ordering: .acquiring) }

    /// Makes every reconnect wait 2–5 s (jittered) at least, or stops that.
    /// The core decides (`BrokerHealth.takeoverSuspected`): two clients with
    /// one id that reconnect at once take each other over forever. Main thread.
    public func setPatientReconnects(_ patient: Bool) {
        if patientReconnects.exchange(patient, ordering: .acquiringAndReleasing) != patient {
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
        if !holding { writeNow(cork: false) }
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
        holding = true
    }

    /// Writes what `holdWrites()` held (nothing to do when the network thread
    /// owns the socket: it was woken for each publication). Main thread.
    public func flush() {
        holding = false
        writeNow(cork: heldPublications)
        heldPublications = false
    }

    /// Writes what is queued if the main thread owns the socket; a failed
    /// write hands the client back to the network thread. Main thread.
    private func writeNow(cork: Bool) {
        guard let mosq = client, mainOwnsSocket else { return }
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
        guard client == nil else {
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
        client = mosq
        retainedSelf = unmanaged
        logConfiguration()

        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, networkThreadMain, context)
        guard rc == 0 else {
            Unmanaged<MQTTLink>.fromOpaque(context).release()
            client = nil
            retainedSelf = nil
            mosquitto_destroy(mosq)
            unmanaged.release()
            throw MQTTError(function: "pthread_create", code: rc, message: String(cString: strerror(rc)))
        }
        networkThread = thread
    }

    /// Publishes a message. QoS 0 or 1; `correlationData` adds the MQTT v5
    /// Correlation Data property (for replies to a Response Topic). Returns
    /// `.notConnected` without queueing while the broker has not accepted the
    /// connection. Never blocks on the network: written at once (non-blocking)
    /// or at `flush()` after `holdWrites()` when the main thread owns the
    /// socket, else by the network thread. Main thread.
    public func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool,
                        correlationData: [UInt8]? = nil) -> PublishOutcome {
        guard let mosq = client, isConnected else { return .notConnected }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if protocolVersion == 5 && correlationData == nil && publisherProperties == nil {
            mosquitto_property_add_string_pair(&publisherProperties, Int32(MQTT_PROP_USER_PROPERTY.rawValue),
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
        let chosen = protocolVersion == 5 && correlationData == nil ? publisherProperties : properties
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(mosq, &mid, topic, Int32(bytes.count), bytes.baseAddress,
                                 Int32(qos), retain, chosen)
        }
        switch rc {
        case .mosqSuccess:
            tracker.published(messageID: mid, qos: qos)
            if mainOwnsSocket {
                if holding { heldPublications = true } else { writeNow(cork: false) }
            } else {
                wake.signal()  // the network thread polls; this makes it write now
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
    /// stop from an abandoned connect without timing it.
    @discardableResult
    public func shutdown(finalPublish: (topic: String, payload: [UInt8], retain: Bool)?,
                         timeoutMs: Int) -> ShutdownOutcome {
        guard let mosq = client else { return .notRunning }
        let deadline = monotonicMilliseconds() + timeoutMs
        // From here the network thread serves the socket (the PUBACKs waited for below, the DISCONNECT).
        holding = false
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
        if isConnected && !tracker.wait(deadline: deadline, until: { tracker.pendingCount == 0 }) {
            logger.warning("\(tracker.pendingCount) QoS 1 message(s) unacknowledged at shutdown")
        }
        stopRequested.store(true, ordering: .releasing)
        let rc = mosquitto_disconnect_v5(mosq, 0, nil)
        if rc != .mosqSuccess && rc != Int32(MOSQ_ERR_NO_CONN.rawValue) {
            logger.warning("mosquitto_disconnect_v5: \(MQTTError.text(for: rc))")
        }
        wake.signal()
        if let thread = networkThread {
            let remaining = max(200, deadline - monotonicMilliseconds())
            if waitReadable(finished.fd, milliseconds: remaining) {
                pthread_join(thread, nil)
            } else if ownership.compareExchange(expected: NetworkOwnership.running, desired: NetworkOwnership.abandoned,
                                                ordering: .acquiringAndReleasing).exchanged {
                // Stuck in a connect (DNS, TCP SYN retries, TLS): leave it; it frees the client when it returns.
                logger.warning("the network thread is still connecting; leaving it to finish on its own")
                pthread_detach(thread)
                networkThread = nil
                client = nil
                connected.store(false, ordering: .releasing)
                mosquitto_property_free_all(&publisherProperties)
                retainedSelf = nil  // the self-retain now belongs to the network thread
                return .abandonedConnect
            } else {
                pthread_join(thread, nil)
            }
            networkThread = nil
        }
        mosquitto_destroy(mosq)
        client = nil
        connected.store(false, ordering: .releasing)
        mosquitto_property_free_all(&publisherProperties)
        retainedSelf?.release()
        retainedSelf = nil
        return .stopped
    }

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
    }
}
