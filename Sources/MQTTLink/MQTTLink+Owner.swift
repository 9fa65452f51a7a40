#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import SpeakerSystem
import Synchronization
import SpeakerPorts

/// Who drives the libmosquitto client's socket (`MQTTLink.owner`).
enum SocketOwner {
    /// The network thread: connecting, waiting for the CONNACK, backing off, shutting down.
    static let network = 0
    /// The main loop's thread, while connected: it reads, writes and keeps
    /// the connection alive itself; the network thread is parked.
    static let main = 1
}

/// One pollable descriptor for the main loop (an epoll set), readable when a
/// member is: the mailbox's eventfd always, the keepalive timerfd, and the
/// broker socket while the main thread owns it.
final class ReadinessSet: Sendable {
    let fd: Int32
    /// Fires every second while the main thread owns the socket, for `mosquitto_loop_misc` (keepalive).
    let keepalive: Int32

    init(mailbox: Int32) throws(MQTTError) {
        func failure(_ function: String) -> MQTTError {
            MQTTError(function: function, code: errno, message: String(cString: strerror(errno)))
        }
        fd = cmosq_readiness_new()
        guard fd >= 0 else { throw failure("epoll_create1") }
        keepalive = cmosq_timer_new()
        guard keepalive >= 0 else {
            let error = failure("timerfd_create")
            close(fd)
            throw error
        }
        guard cmosq_readiness_watch(fd, mailbox, 0) == 0, cmosq_readiness_watch(fd, keepalive, 0) == 0 else {
            let error = failure("epoll_ctl")
            close(fd)
            close(keepalive)
            throw error
        }
    }

    deinit {
        close(fd)
        close(keepalive)
    }
}

/// The socket's two owners (see `MQTTLink`'s type comment). While connected
/// the main thread owns it: a command is read, reduced and answered on that
/// one thread, with no thread hand-off on its path (issue 13). The network
/// thread lends it the socket once the broker has accepted the connection
/// and takes it back when the main thread finds it lost, or at `shutdown`.
/// Every change of owner happens under `handover`; `owner` is read without
/// it (acquire) by the thread that may act on it.
extension MQTTLink {
    /// Whether the calling (main) thread owns the socket now.
    var mainOwnsSocket: Bool { owner.load(ordering: .acquiring) == SocketOwner.main }

    /// Lends the connected socket to the main thread and parks until it is
    /// given back. Returns nil without lending when `shutdown` has begun (or
    /// epoll refused the socket: the network thread then keeps serving it),
    /// else the result the main thread ended with: a libmosquitto error and
    /// its errno after a loss, or success when `shutdown` took it back.
    /// Network thread only.
    func lendToMain(_ mosq: OpaquePointer) -> (rc: Int32, errno: Int32)? {
        let socket = mosquitto_socket(mosq)
        guard socket >= 0 else { return nil }
        let lent = handover.withLock { closed -> Bool in
            let output = mosquitto_want_write(mosq)
            guard !closed, cmosq_readiness_watch(readiness.fd, socket, output ? 1 : 0) == 0 else { return false }
            watchingOutput = output
            keepaliveDue = MonotonicClock.now() + MQTTLink.keepaliveTickNs  // ≤ the timer's first expiry
            _ = cmosq_timer_every(readiness.keepalive, 1000)
            owner.store(SocketOwner.main, ordering: .releasing)
            return true
        }
        announceConnected()
        guard lent else { return nil }
        mailbox.nudge()  // the main thread writes what was queued meanwhile
        while owner.load(ordering: .acquiring) == SocketOwner.main {
            if waitReadable(wake.fd, milliseconds: 60_000) { wake.drain() }
        }
        // The give-back's own signal may have come before the wait: spent
        // here, so it does not cut the backoff wait after a loss short
        // (`shutdown` signals again once it has set `stopRequested`).
        wake.drain()
        return returned.withLock { result in
            defer { result = (Int32(MOSQ_ERR_SUCCESS.rawValue), 0) }
            return result
        }
    }

    /// Posts the `.connected` that on_connect left pending, once. Network
    /// thread (after lending, or when not lending), or on_disconnect.
    func announceConnected() {
        let pending = pendingConnected.exchange(-1, ordering: .acquiringAndReleasing)
        if pending >= 0 { mailbox.post(.connected(sessionPresent: pending == 1)) }
    }

    /// One main-thread turn on the socket, from `drainEvents`: read what
    /// arrived (the callbacks post to the mailbox, drained right after),
    /// write what an earlier turn could not, and keep the connection alive.
    /// Writes queued by what was read (a PUBACK) wait for `flush()`, so that
    /// they leave with the answer. Main thread.
    func serviceOnMain() {
        guard let mosq = client, mainOwnsSocket else { return }  // (disarming the timer reset its count)
        clearKeepaliveTick()
        // The callbacks run here and post; drainEvents takes the events right after.
        let (rc, code) = mailbox.quietly { () -> (Int32, Int32) in
            var rc = mosquitto_loop_read(mosq, 1)
            if rc == .mosqSuccess { rc = mosquitto_loop_misc(mosq) }
            if rc == .mosqSuccess && watchingOutput { rc = writeOnMain(mosq, cork: false) }
            return (rc, errno)
        }
        if rc != .mosqSuccess || mosquitto_socket(mosq) < 0 { giveBack(rc, code) }
    }

    /// Reads the keepalive timerfd (else it stays readable) only once it can
    /// have fired: `keepaliveDue` trails its expiries (set just before it was
    /// armed, advanced by whole periods), so a drain for a command costs no
    /// read(2) of it. Main thread, owning the socket.
    private func clearKeepaliveTick() {
        guard MonotonicClock.now() >= keepaliveDue else { return }
        var expirations: UInt64 = 0
        if read(readiness.keepalive, &expirations, 8) == 8 {
            keepaliveDue += expirations * MQTTLink.keepaliveTickNs
        }
    }

    /// Writes everything queued, as one TCP segment when `cork` is set (a
    /// command's PUBACK and its result). What the socket does not take is
    /// written when it becomes writable (EPOLLOUT).
    /// Main thread, owning the socket.
    func writeOnMain(_ mosq: OpaquePointer, cork: Bool) -> Int32 {
        var rc = Int32(MOSQ_ERR_SUCCESS.rawValue)
        if mosquitto_want_write(mosq) {
            let socket = mosquitto_socket(mosq)
            if cork { _ = cmosq_cork(socket, 1) }
            rc = mosquitto_loop_write(mosq, 1)
            if cork && rc == .mosqSuccess { _ = cmosq_cork(socket, 0) }
        }
        let socket = mosquitto_socket(mosq)
        if rc == .mosqSuccess && socket >= 0 {
            let pending = mosquitto_want_write(mosq)
            if pending != watchingOutput {
                _ = cmosq_readiness_watch(readiness.fd, socket, pending ? 1 : 0)
                watchingOutput = pending
            }
        }
        return rc
    }

    /// The main thread found the connection lost (libmosquitto has closed
    /// the socket and called on_disconnect): hands the client back to the
    /// network thread, which reconnects. Main thread.
    func giveBack(_ rc: Int32, _ code: Int32) {
        let result = rc == .mosqSuccess ? Int32(MOSQ_ERR_NO_CONN.rawValue) : rc
        takeBack(result: (result, code))
    }

    /// Ends the main thread's ownership (if it has it) and wakes the network
    /// thread with `result`; with `closing` the socket is never lent again
    /// (`shutdown`). Main thread.
    func takeBack(result: (Int32, Int32), closing: Bool = false) {
        guard let mosq = client else { return }
        handover.withLock { closed in
            if closing { closed = true }
            guard owner.load(ordering: .acquiring) == SocketOwner.main else { return }
            let socket = mosquitto_socket(mosq)
            if socket >= 0 { cmosq_readiness_forget(readiness.fd, socket) }
            _ = cmosq_timer_every(readiness.keepalive, 0)
            watchingOutput = false
            returned.withLock { $0 = result }
            owner.store(SocketOwner.network, ordering: .releasing)
        }
        wake.signal()
    }
}
