// SPDX-License-Identifier: Apache-2.0
import Testing
#if canImport(Glibc)
import Glibc
#endif
import MQTTLink
import SpeakerCore
import SpeakerSystem
import TestSupport

/// Drives an `MQTTLink` the way the main loop does: poll its eventFD, drain,
/// and keep unmatched events for later waits. Used from one test thread.
final class LinkHarness {
    let link: MQTTLink
    let logs = MemoryLogBackend()
    private var pending: [MQTTEvent] = []

    static let availability = "ambient-speaker/test/availability"
    static let command = "ambient-speaker/test/command"

    init(port: UInt16, clientID: String = "ambient-speaker-test", will: Bool = true,
         username: String? = nil, password: String? = nil, tls: MQTTTLS? = nil,
         configure: (inout MQTTSettings) -> Void = { _ in }) throws {
        var settings = MQTTSettings(
            host: "127.0.0.1", port: Int(port), clientID: clientID, username: username, password: password, tls: tls,
            will: will ? MQTTWill(topic: Self.availability, payload: Array("offline".utf8), qos: 1, retain: true) : nil,
            subscriptions: [Self.command])
        configure(&settings)
        link = try MQTTLink(settings: settings, logger: Logger(component: "mqtt", threshold: .debug, backend: logs),
                            clock: { MonotonicClock.now() })
    }

    /// Waits (poll on eventFD, never sleeps) for the first event matching `match`.
    func next(timeout: Double = 5, where match: (MQTTEvent) -> Bool) -> MQTTEvent? {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while true {
            if let index = pending.firstIndex(where: match) { return pending.remove(at: index) }
            let now = Monotonic.nanoseconds()
            guard now < deadline else { return nil }
            var entry = pollfd(fd: link.eventFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&entry, 1, Int32((deadline - now) / 1_000_000) + 1)
            pending += link.drainEvents()
        }
    }

    /// Waits for `.connected`; returns its sessionPresent flag, nil on timeout.
    func connected(timeout: Double = 5) -> Bool? {
        guard case .connected(let present)? = next(timeout: timeout, where: {
            if case .connected = $0 { return true } else { return false }
        }) else { return nil }
        return present
    }

    /// Waits for `.disconnected`; returns its reason.
    func disconnected(timeout: Double = 5) -> Int32? {
        guard case .disconnected(let reason)? = next(timeout: timeout, where: {
            if case .disconnected = $0 { return true } else { return false }
        }) else { return nil }
        return reason
    }

    /// Waits for a `.problem` (of `kind`, if given).
    func problem(_ kind: ConnectionProblem.Kind? = nil, timeout: Double = 5) -> ConnectionProblem? {
        guard case .problem(let problem)? = next(timeout: timeout, where: {
            if case .problem(let p) = $0 { return kind == nil || p.kind == kind } else { return false }
        }) else { return nil }
        return problem
    }

    /// Every event seen so far that no wait has taken.
    var unclaimed: [MQTTEvent] { pending }

    /// Waits for a message on `topic`.
    func message(on topic: String, timeout: Double = 5) -> MQTTMessage? {
        guard case .message(let message)? = next(timeout: timeout, where: {
            if case .message(let m) = $0 { return m.topic == topic } else { return false }
        }) else { return nil }
        return message
    }

    /// A started, connected link and a peer that watches `availability` (and
    /// `alsoSubscribe`) and has seen the link announce itself: from here on a
    /// command published by the peer reaches the link.
    static func online(on broker: TestBroker, alsoSubscribe: [String] = []) throws -> (speaker: LinkHarness, peer: TestPeer) {
        let speaker = try LinkHarness(port: broker.port)
        try speaker.link.start()
        #expect(speaker.connected() != nil)
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe(availability)
        for topic in alsoSubscribe { try peer.subscribe(topic) }
        #expect(speaker.announceOnline(to: peer))
        return (speaker, peer)
    }

    /// Publishes `online` (retained, QoS 1) as the core does after connecting,
    /// and waits until `peer` sees it. Because the link sends its SUBSCRIBEs
    /// before this publish on the same connection, afterwards the broker
    /// knows the link's subscriptions: a command published now reaches it.
    func announceOnline(to peer: TestPeer, timeout: Double = 5) -> Bool {
        let marker = Monotonic.nanoseconds()
        guard case .queued = link.publish(topic: Self.availability, payload: Array("online".utf8), qos: 1, retain: true) else {
            return false
        }
        return peer.waitForMessage(topic: Self.availability, timeout: timeout) {
            $0.payloadString == "online" && $0.receivedAtNanoseconds >= marker
        } != nil
    }

    @discardableResult
    func shutdown(timeoutMs: Int = 2000) -> MQTTLink.ShutdownOutcome {
        link.shutdown(finalPublish: (topic: Self.availability, payload: Array("offline".utf8), retain: true),
                      timeoutMs: timeoutMs)
    }
}
