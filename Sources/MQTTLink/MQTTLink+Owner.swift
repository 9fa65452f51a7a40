// SPDX-License-Identifier: Apache-2.0
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
struct ReadinessSet: Sendable {
    let members: EpollSet
    /// Fires every second while the main thread owns the socket, for `mosquitto_loop_misc` (keepalive).
    let keepalive: PeriodicTimerFD

    /// The descriptor the main loop polls.
    var fd: Int32 { members.fd }

    init(mailbox: Int32) throws(MQTTError) {
        do throws(SystemError) {
            members = try EpollSet()
            keepalive = try PeriodicTimerFD()
            try members.watch(mailbox)
            try members.watch(keepalive.fd)
        } catch {
            throw MQTTError(system: error)
        }
    }
}

/// The socket's two owners (see `MQTTLink`'s type comment). While connected
/// the main thread owns it: a command is read, reduced and answered on that
/// one thread, with no thread hand-off on its path. The network
/// thread lends it the socket once the broker has accepted the connection
/// and takes it back when the main thread finds it lost, or at `shutdown`.
/// Every change of owner happens under `handover.lock`; `handover.owner` is
/// read without it (acquire) by the thread that may act on it.
extension MQTTLink {
    /// Whether the calling (main) thread owns the socket now.
    var mainOwnsSocket: Bool { handover.owner.load(ordering: .acquiring) == SocketOwner.main }

    /// Lends the connected socket to the main thread and parks until it is
    /// given back. Returns nil without lending when `shutdown` has begun (or
    /// epoll refused the socket: the network thread then keeps serving it),
    /// else the result the main thread ended with: a libmosquitto error and
    /// its errno after a loss, or success when `shutdown` took it back.
    /// Network thread only.
    func lendToMain(_ mosq: OpaquePointer) -> (rc: Int32, errno: Int32)? {
        let socket = mosquitto_socket(mosq)
        guard socket >= 0 else { return nil }
        let lent = handover.lock.withLock { closed -> Bool in
            let output = mosquitto_want_write(mosq)
            guard !closed, (try? handover.readiness.members.watch(socket, output: output)) != nil else { return false }
            ownerSocket.watchingOutput = output
            ownerSocket.keepaliveDue = clock() + OwnerSocketState.keepaliveTickNs  // ≤ the timer's first expiry
            try? handover.readiness.keepalive.fire(everyMilliseconds: 1000)
            handover.owner.store(SocketOwner.main, ordering: .releasing)
            return true
        }
        announceConnected()
        guard lent else { return nil }
        mailbox.nudge()  // the main thread writes what was queued meanwhile
        while handover.owner.load(ordering: .acquiring) == SocketOwner.main {
            if waitReadable(network.wake.fd, milliseconds: 60_000) { network.wake.drain() }
        }
        // The give-back's own signal may have come before the wait: spent
        // here, so it does not cut the backoff wait after a loss short
        // (`shutdown` signals again once it has set `stopRequested`).
        network.wake.drain()
        return handover.returned.withLock { result in
            defer { result = (Int32(MOSQ_ERR_SUCCESS.rawValue), 0) }
            return result
        }
    }

    /// Posts the `.connected` that on_connect left pending, once. Network
    /// thread (after lending, or when not lending), or on_disconnect.
    func announceConnected() {
        let pending = status.pendingConnected.exchange(-1, ordering: .acquiringAndReleasing)
        if pending >= 0 { mailbox.post(.connected(sessionPresent: pending == 1)) }
    }

    /// One main-thread turn on the socket, from `drainEvents`: write what an
    /// earlier turn could not, read what arrived (the callbacks post to the
    /// mailbox, drained right after), and keep the connection alive. Writes
    /// queued by what was read (a PUBACK) wait for `flush()`, so that they
    /// leave with the answer, after the core has journaled the command (a
    /// crash before that leaves it unacknowledged: the broker delivers it
    /// again). Main thread.
    func serviceOnMain() {
        guard let mosq = lifetime.client, mainOwnsSocket else { return }  // (disarming the timer reset its count)
        clearKeepaliveTick()
        // The callbacks run here and post; drainEvents takes the events right after.
        let (rc, code) = mailbox.quietly { () -> (Int32, Int32) in
            var rc = Int32(MOSQ_ERR_SUCCESS.rawValue)
            if ownerSocket.watchingOutput { rc = writeOnMain(mosq, cork: false) }
            if rc == .mosqSuccess { rc = mosquitto_loop_read(mosq, 1) }
            if rc == .mosqSuccess { rc = mosquitto_loop_misc(mosq) }
            return (rc, errno)
        }
        if rc != .mosqSuccess || mosquitto_socket(mosq) < 0 { giveBack(rc, code) }
    }

    /// Reads the keepalive timerfd (else it stays readable) only once it can
    /// have fired: `keepaliveDue` trails its expiries (set just before it was
    /// armed, advanced by whole periods), so a drain for a command costs no
    /// read(2) of it. Main thread, owning the socket.
    private func clearKeepaliveTick() {
        guard clock() >= ownerSocket.keepaliveDue else { return }
        ownerSocket.keepaliveDue += handover.readiness.keepalive.takeExpirations() * OwnerSocketState.keepaliveTickNs
    }

    /// Writes everything queued, as one TCP segment when `cork` is set (a
    /// command's PUBACK and its result). What the socket does not take is
    /// written when it becomes writable (EPOLLOUT).
    /// Main thread, owning the socket.
    func writeOnMain(_ mosq: OpaquePointer, cork: Bool) -> Int32 {
        var rc = Int32(MOSQ_ERR_SUCCESS.rawValue)
        if mosquitto_want_write(mosq) {
            let socket = mosquitto_socket(mosq)
            if cork { try? Descriptors.setTCPCork(socket, true) }
            rc = mosquitto_loop_write(mosq, 1)
            if cork && rc == .mosqSuccess { try? Descriptors.setTCPCork(socket, false) }
        }
        let socket = mosquitto_socket(mosq)
        if rc == .mosqSuccess && socket >= 0 {
            let pending = mosquitto_want_write(mosq)
            if pending != ownerSocket.watchingOutput {
                try? handover.readiness.members.watch(socket, output: pending)
                ownerSocket.watchingOutput = pending
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
        guard let mosq = lifetime.client else { return }
        handover.lock.withLock { closed in
            if closing { closed = true }
            guard handover.owner.load(ordering: .acquiring) == SocketOwner.main else { return }
            let socket = mosquitto_socket(mosq)
            if socket >= 0 { handover.readiness.members.forget(socket) }
            try? handover.readiness.keepalive.fire(everyMilliseconds: 0)
            ownerSocket.watchingOutput = false
            handover.returned.withLock { $0 = result }
            handover.owner.store(SocketOwner.network, ordering: .releasing)
        }
        network.wake.signal()
    }
}
