// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import SpeakerSystem
import SpeakerCore
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
    /// the wait at once. A v5 CONNECT refused for its protocol version, or
    /// closed unanswered, is retried at once as MQTT 3.1.1 (no properties;
    /// response topics are then unavailable); `ProtocolChoice` decides when
    /// that level is kept. Runs on the network thread only; `handle` is the
    /// client `start` made (the thread never reads `lifetime`).
    func runNetwork(_ handle: ClientHandle) {
        let mosq = handle.mosq
        var backoff = ReconnectBackoff(minimumSeconds: settings.reconnectMinSeconds,
                                       maximumSeconds: settings.reconnectMaxSeconds)
        var fresh = true
        var choice = ProtocolChoice()
        while !network.stopRequested.load(ordering: .acquiring) {
            status.libraryError.withLock { $0 = nil }
            mosquitto_log_callback_set(mosq, linkOnLog)  // removed again by on_connect
            status.lastRefusal.store(0, ordering: .releasing)
            status.answerBytesSeen.store(false, ordering: .releasing)
            var rc = fresh ? connectFresh(mosq) : mosquitto_reconnect(mosq)
            var savedErrno = errno
            fresh = false
            if rc == .mosqSuccess {
                rc = .mosqSuccess
                // Once stopping, keep looping only while connected (so the
                // queued DISCONNECT is written); a pending connect is dropped.
                var lendable = true
                while rc == .mosqSuccess && !(network.stopRequested.load(ordering: .acquiring) && !isConnected) {
                    if isConnected, let change = choice.after(.accepted) { log(change) }
                    if lendable && isConnected {
                        // Accepted: the main thread serves the socket until it is lost or `shutdown` takes it back.
                        if let result = lendToMain(mosq) {
                            (rc, savedErrno) = result
                            continue
                        }
                        lendable = false
                    }
                    if isConnected { announceConnected() }  // not lent: the core hears of it now
                    rc = serviceOnce(mosq)
                    savedErrno = errno
                }
            }
            if network.stopRequested.load(ordering: .acquiring) { break }
            var change: ProtocolChoice.Change? = nil
            if status.established.exchange(false, ordering: .acquiringAndReleasing) {
                backoff.reset()
            } else {
                let refusal = status.lastRefusal.exchange(0, ordering: .acquiringAndReleasing)
                let libraryError = status.libraryError.withLock { $0 }
                let outcome = Self.outcome(refused: status.fallbackRequested.exchange(false, ordering: .acquiringAndReleasing),
                                           refusal: refusal, code: rc, savedErrno: savedErrno, libraryError: libraryError,
                                           bytesSeen: status.answerBytesSeen.load(ordering: .acquiring))
                change = choice.after(outcome)
                let problem = MQTTReasons.attemptProblem(code: rc, savedErrno: savedErrno, refusal: refusal,
                                                         v311: protocolVersion == 4, libraryError: libraryError)
                let retriesAtOnce = change == .fellBackOnRefusal || change == .triesV311AfterClose
                if let problem, !retriesAtOnce { mailbox.post(.problem(problem)) }
            }
            if let change {
                log(change)
                let v5 = choice.level == .v5
                mosquitto_int_option(mosq, MOSQ_OPT_PROTOCOL_VERSION, v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
                status.protocolLevel.store(choice.level.rawValue, ordering: .releasing)
                fresh = true
                if !v5 { continue }  // retried at once; a return to v5 waits for the backoff
            }
            var delay = backoff.nextDelayMs()
            if network.patientReconnects.load(ordering: .acquiring) {
                // The core suspects a takeover by a client with the same id: stop the ping-pong.
                delay = max(delay, Int.random(in: NetworkThreadControl.patientDelayMs))
            }
            logger.debug("next connect attempt in \(delay) ms")
            if waitReadable(network.wake.fd, milliseconds: delay) { network.wake.drain() }
        }
        finishNetwork(mosq)
    }

    /// What an attempt that the broker did not accept says about the
    /// protocol level: the exact version refusal (`refused`: on_connect or
    /// `noticeV311Refusal`), another CONNACK, a close before any byte of an
    /// answer (EOF or reset, with no TLS error logged, `bytesSeen` false: a
    /// truncated or broken CONNACK followed by a close is no reason to try
    /// another level), or nothing. Any thread.
    static func outcome(refused: Bool, refusal: Int32, code: Int32, savedErrno: Int32,
                        libraryError: String?, bytesSeen: Bool = false) -> ProtocolChoice.Outcome {
        if refused { return .refusedVersion }
        if refusal != 0 { return .refused }
        guard libraryError == nil, !bytesSeen else { return .failed }
        switch code {
        case Int32(MOSQ_ERR_CONN_LOST.rawValue):
            return .closedUnanswered
        case Int32(MOSQ_ERR_ERRNO.rawValue) where savedErrno == ECONNRESET || savedErrno == EPIPE:
            return .closedUnanswered
        default:
            return .failed
        }
    }

    /// Says once what a change of protocol level means. Network thread.
    private func log(_ change: ProtocolChoice.Change) {
        switch change {
        case .fellBackOnRefusal:
            logger.warning("the broker refused MQTT v5; falling back to MQTT 3.1.1 (no response topics)")
        case .triesV311AfterClose:
            logger.info("the broker closed the connection without answering the MQTT v5 CONNECT; trying MQTT 3.1.1")
        case .keepsV311:
            logger.warning("the broker accepted MQTT 3.1.1 after closing on v5; falling back to MQTT 3.1.1 " +
                           "until restart (no response topics, no user properties)")
        case .returnsToV5:
            logger.info("the broker did not accept MQTT 3.1.1 either; the next attempt is MQTT v5 again")
        }
    }

    /// One turn of the network loop, poll(2)-driven: waits up to a second for
    /// the socket (readable, or writable when libmosquitto has output queued)
    /// or the `wake` eventfd (a publish or `shutdown` from the main thread),
    /// then lets libmosquitto read, write and keep the connection alive.
    /// Replaces `mosquitto_loop`, whose select(2) aborts the process on a
    /// descriptor numbered ≥ FD_SETSIZE (1024). Network thread only.
    /// Once `shutdown` has requested the stop, only writes (the DISCONNECT):
    /// reading would acknowledge a command that nobody answers any more,
    /// while a command left unread is delivered again to the next process.
    private func serviceOnce(_ mosq: OpaquePointer) -> Int32 {
        let socket = mosquitto_socket(mosq)
        guard socket >= 0 else { return Int32(MOSQ_ERR_NO_CONN.rawValue) }
        let wantsWrite = mosquitto_want_write(mosq)
        let reading = !network.stopRequested.load(ordering: .acquiring)
        var fds = [pollfd(fd: socket, events: (reading ? Int16(POLLIN) : 0) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
                   pollfd(fd: network.wake.fd, events: Int16(POLLIN), revents: 0)]
        if poll(&fds, 2, 1000) < 0 && errno != EINTR { return Int32(MOSQ_ERR_ERRNO.rawValue) }
        if fds[1].revents & Int16(POLLIN) != 0 { network.wake.drain() }
        if reading && fds[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
            noticeV311Refusal(socket)
            let rc = mosquitto_loop_read(mosq, 1)
            if rc != .mosqSuccess { return rc }
        }
        if mosquitto_want_write(mosq) {
            let rc = mosquitto_loop_write(mosq, 1)
            if rc != .mosqSuccess { return rc }
        }
        return mosquitto_loop_misc(mosq)
    }

    /// A 3.1.1-only broker answers a v5 CONNECT with the 3.1.1 CONNACK
    /// "unacceptable protocol version" (`20 02 00 01`). libmosquitto 2.0.11
    /// reports that to on_connect as 132; 2.0.21 (trixie, and the static
    /// build) fails it as a malformed v5 CONNACK without calling on_connect.
    /// So before libmosquitto reads the CONNACK, peek (MSG_PEEK: nothing is
    /// consumed) for exactly those four bytes, and only then fall back: any
    /// other malformed CONNACK stays a `.malformed` problem, so a broken or
    /// hostile broker cannot downgrade the link. Plain TCP only (under TLS the
    /// bytes are ciphertext; there 2.0.11's callback path still works).
    /// Any byte seen is noted (`answerBytesSeen`): a close after it is not
    /// a close without an answer.
    private func noticeV311Refusal(_ socket: Int32) {
        guard protocolVersion == 5, !isConnected, settings.tls == nil else { return }
        var head: [UInt8] = [0, 0, 0, 0]
        let n = recv(socket, &head, 4, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        if n > 0 { status.answerBytesSeen.store(true, ordering: .releasing) }
        if n == 4 && head == [0x20, 0x02, 0x00, 0x01] { status.fallbackRequested.store(true, ordering: .releasing) }
    }

    /// CONNECT with this link's properties: the Session Expiry Interval and
    /// the Maximum Packet Size on v5, none on 3.1.1. libmosquitto keeps them for `mosquitto_reconnect`.
    private func connectFresh(_ mosq: OpaquePointer) -> Int32 {
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        if protocolVersion == 5 {
            mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue),
                                         settings.sessionExpirySeconds)
            if settings.maximumPacketSize > 0 {
                mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue),
                                             settings.maximumPacketSize)
            }
        }
        return mosquitto_connect_bind_v5(mosq, settings.host, Int32(settings.port),
                                         Int32(settings.keepaliveSeconds), nil, properties)
    }

    /// Hands the client back: if `shutdown` is still waiting it joins and
    /// destroys it; if it gave up, this thread destroys it and drops the
    /// link's self-retain.
    private func finishNetwork(_ mosq: OpaquePointer) {
        if network.ownership.compareExchange(expected: NetworkOwnership.running, desired: NetworkOwnership.threadExited,
                                     ordering: .acquiringAndReleasing).exchanged {
            network.finished.signal()
        } else {
            mosquitto_destroy(mosq)
            Unmanaged.passUnretained(self).release()
        }
    }
}
