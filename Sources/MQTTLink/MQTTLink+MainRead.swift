#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import Synchronization

/// One pollable descriptor for the main loop (an epoll set): the mailbox's
/// eventfd always, and the broker socket while the main thread reads it.
final class ReadinessSet: Sendable {
    let fd: Int32

    init(mailbox: Int32) throws(MQTTError) {
        fd = cmosq_readiness_new()
        guard fd >= 0 else { throw MQTTError(function: "epoll_create1", code: errno, message: String(cString: strerror(errno))) }
        guard add(mailbox) else {
            let e = errno
            Glibc.close(fd)
            throw MQTTError(function: "epoll_ctl", code: e, message: String(cString: strerror(e)))
        }
    }

    deinit { Glibc.close(fd) }

    /// Watches `member` for input (again, if a closed descriptor's number came back).
    @discardableResult
    func add(_ member: Int32) -> Bool {
        cmosq_readiness_add(fd, member) == 0
    }
}

extension MQTTLink {
    /// How long the network thread leaves readable input to the main thread.
    static let mainReadGraceMs = 5

    /// Reads the broker socket on the main thread, inside `drainEvents()`:
    /// the messages then reach the core without waking a second thread (the
    /// network thread used to read them and hand them over through the
    /// mailbox — one thread wake-up on every command's path, issue 13). The
    /// callbacks run here, under `socketAccess`, and still post to the
    /// mailbox, which is drained right after. A failed read (the broker
    /// closed, a malformed packet) is passed to the network thread, which
    /// reports it and reconnects as before. Main thread.
    func readOnMainThread() {
        guard let mosq = client else { return }
        socketAccess.withLock { _ in
            guard mainReads.load(ordering: .acquiring) else { return }
            let socket = mosquitto_socket(mosq)
            guard socket >= 0 else { return }
            var entry = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 0) > 0 else { return }
            noticeV311Refusal(socket)
            let rc = mosquitto_loop_read(mosq, 1)
            if rc != .mosqSuccess {
                readFailure.withLock { $0 = (rc, errno) }
                mainReads.store(false, ordering: .releasing)
                wake.signal()
                return
            }
            // on_connect queued the subscriptions (callbacks only queue).
            if mosquitto_want_write(mosq) && mosquitto_loop_write(mosq, 1) != .mosqSuccess { wake.signal() }
        }
    }

    /// After a connect: the main thread reads the socket from now on (the
    /// network thread keeps writing what a publish left, the keepalive, and
    /// reconnecting). Not while stopping: then the network thread reads the
    /// last PUBACKs itself. Network thread.
    func handOverReading(_ mosq: OpaquePointer) {
        socketAccess.withLock { _ in
            let socket = mosquitto_socket(mosq)
            guard socket >= 0, !readingStopped.load(ordering: .acquiring), readiness.add(socket) else { return }
            mainReads.store(true, ordering: .releasing)
        }
    }

    /// Before the network thread touches the client outside `socketAccess`
    /// (a reconnect): the main thread stops reading. Network thread.
    func takeBackReading() {
        socketAccess.withLock { _ in mainReads.store(false, ordering: .releasing) }
    }

    /// A failed main-thread read, once (its result, with errno restored), or nil.
    func takeReadFailure() -> Int32? {
        guard let (rc, code) = readFailure.withLock({ failure -> (Int32, Int32)? in
            defer { failure = nil }
            return failure
        }) else { return nil }
        errno = code
        return rc
    }
}
