// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem
import Synchronization

// The link's state, grouped by concern and by who may touch it: the values
// shared between threads are final classes of `let` atomics and mutexes
// (made once with the link); the values one thread owns are plain `var`
// structs. See `MQTTLink`'s type comment for the threads.

/// What libmosquitto's callbacks and the network thread learn about the
/// current connection and attempt. Atomics and a mutex: any thread.
final class ConnectionStatus: Sendable {
    /// The broker has accepted the connection and it has not dropped since.
    let connected = Atomic<Bool>(false)
    /// Set by on_connect on success; the network thread resets the backoff.
    let established = Atomic<Bool>(false)
    /// The sessionPresent flag (0/1) of a CONNACK not yet announced as
    /// `.connected`, or -1 (`announceConnected`).
    let pendingConnected = Atomic<Int>(-1)
    /// The CONNACK reason of the last refused connection (0 when none), for logging.
    let lastRefusal = Atomic<Int32>(0)
    /// Set when a v5 CONNECT was refused for its protocol version (on_connect, or the peeked 3.1.1 CONNACK: `noticeV311Refusal`).
    let fallbackRequested = Atomic<Bool>(false)
    /// 5 for MQTT v5, 4 for 3.1.1 after a fallback.
    let protocolLevel = Atomic<Int>(5)
    /// The broker sent bytes during the current v5 attempt (plain TCP, seen
    /// by `noticeV311Refusal`'s peek): a close after them is not a close
    /// "without any CONNACK", so it is no reason to try 3.1.1.
    let answerBytesSeen = Atomic<Bool>(false)
    /// The first error line libmosquitto logged during the current attempt
    /// (OpenSSL's reason when TLS fails); reset before each attempt.
    let libraryError = Mutex<String?>(nil)
}

/// The network thread's life and reconnect policy: how it is woken and
/// stopped, who frees the client when it ends, and whether reconnects wait
/// patiently. Atomics and eventfds: any thread.
final class NetworkThreadControl: Sendable {
    /// Set by `shutdown`; the network thread stops at its next step.
    let stopRequested = Atomic<Bool>(false)
    /// Wakes the network thread out of a backoff wait or a poll.
    let wake: EventFD
    /// Signalled by the network thread as it exits.
    let finished: EventFD
    /// Who frees the client: `running`, then `threadExited` or `abandoned` (`NetworkOwnership`).
    let ownership = Atomic<Int>(NetworkOwnership.running)
    /// Set by the main thread while the core suspects that another client
    /// with the same client id keeps taking the session over: every
    /// reconnect then waits at least `patientDelayMs`.
    let patientReconnects = Atomic<Bool>(false)
    /// The least wait before a reconnect while `patientReconnects` is set.
    static let patientDelayMs = 2_000...5_000

    init(wake: EventFD, finished: EventFD) {
        self.wake = wake
        self.finished = finished
    }
}

/// How the client's socket passes between its two owners (`MQTTLink+Owner`):
/// which thread drives it, the lock every change of owner is made under,
/// what the main thread's ownership ended with, and the epoll set the main
/// loop polls. Any thread.
final class SocketHandover: Sendable {
    /// Which thread drives the socket: `SocketOwner.network` or `.main`.
    let owner = Atomic<Int>(SocketOwner.network)
    /// Held while the owner changes; true once `shutdown` has begun (never lent again).
    let lock = Mutex<Bool>(false)
    /// How the main thread's ownership ended: the libmosquitto result and errno of a loss, or success.
    let returned = Mutex<(Int32, Int32)>((0, 0))
    /// What the main loop polls (`MQTTLink.eventFD`).
    let readiness: ReadinessSet

    init(readiness: ReadinessSet) { self.readiness = readiness }
}

/// The socket's state kept by the thread that owns it: set by the network
/// thread under `SocketHandover.lock` as it lends the socket, then the main
/// thread's while it owns it.
struct OwnerSocketState {
    /// EPOLLOUT is watched because the socket did not take everything.
    var watchingOutput = false
    /// No keepalive tick before this instant (clock ns), see `clearKeepaliveTick`.
    var keepaliveDue: UInt64 = 0
    /// The keepalive timer's period.
    static let keepaliveTickNs: UInt64 = 1_000_000_000
}

/// How the main thread batches what it publishes. Main thread only.
struct PublishBatch {
    /// Publications are queued until `flush()` (`holdWrites()`).
    var holding = false
    /// A publication was queued while holding, so `flush()` has several
    /// packets to send and corks them (else at most a PUBACK).
    var heldPublications = false
    /// The MQTT v5 properties of every publication without correlation data
    /// (the `publisher` user property), built at the first publish and
    /// reused: libmosquitto copies them into each message.
    var publisherProperties: OpaquePointer?
}

/// The libmosquitto client and what keeps it and the link alive: the client,
/// the network thread, and the link's retain of itself while libmosquitto
/// holds it as userdata. Main thread only (`start` and `shutdown`).
struct ClientLifetime {
    var client: OpaquePointer?
    var networkThread: OSThread?
    var retainedSelf: Unmanaged<MQTTLink>?
}

/// The client as handed to the network thread when it starts.
// @unchecked Sendable: libmosquitto runs in threaded mode, and the socket is
// driven by one thread at a time, the one `SocketHandover.owner` names.
struct ClientHandle: @unchecked Sendable {
    let mosq: OpaquePointer
}
