// SPDX-License-Identifier: Apache-2.0
/// What the core knows about the broker connection beyond up/down: the
/// current reason it is not connected, and whether another client with the
/// same client id keeps taking the session over (two speakers configured with
/// one device id). Decides what is logged — each distinct cause once at
/// warning when it starts and once when it clears — and what systemd
/// `STATUS=` shows, and whether the link should reconnect patiently
/// (`takeoverSuspected`). Pure value, changed only by `Speaker.reduce`.
public struct BrokerHealth: Equatable, Sendable {
    /// Why the speaker is not connected now; nil while connected or before
    /// the first failure. Kept while a takeover episode lasts.
    public private(set) var problem: ConnectionProblem?
    /// True from the inferred (or broker-announced) takeover until a
    /// connection has lasted `stableMs`.
    public private(set) var takeoverSuspected = false
    /// Connections in a row that ended within `stableMs`.
    public private(set) var shortConnectionsInARow = 0
    /// When the current connection was established; nil while not connected.
    var connectedSince: MonotonicInstant?
    /// Whether the connection that just ended was a short one (set on loss,
    /// read by the loss's `ConnectionProblem`).
    private var lastConnectionWasShort = false
    /// Hashes of the last `ownSessionMemory` `session` payloads this speaker
    /// published (this run), to recognise its own retained state.
    private var ownSessions: [Int] = []
    /// Since the last stable connection, the broker delivered a retained
    /// `session` on this speaker's own topic that this speaker did not
    /// publish: someone else publishes as this device.
    public private(set) var foreignSessionSeen = false
    /// Connections established since start.
    private var connections = 0

    /// A connection that lasts this long is stable: ends a takeover episode.
    public static let stableMs = 10_000
    /// This many short connections in a row, each ended by a loss, with a
    /// foreign retained `session` seen meanwhile, mean another client is
    /// using the same client id. (A broker that is restarted again and again
    /// also cuts short connection after connection, but it hands back this
    /// speaker's own retained `session`.)
    public static let takeoverAfter = 3
    /// How many of its own `session` payloads the speaker remembers.
    static let ownSessionMemory = 64

    /// A payload's hash, fed to the hasher in one piece: `[UInt8].hashValue`
    /// combines byte by byte, and every command hashes a whole `session`
    /// payload (several hundred bytes).
    static func digest(_ payload: [UInt8]) -> Int {
        var hasher = Hasher()
        payload.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// Notes a `session` payload this speaker publishes.
    mutating func publishedOwnSession(_ payload: [UInt8]) {
        ownSessions.append(Self.digest(payload))
        if ownSessions.count > Self.ownSessionMemory { ownSessions.removeFirst(ownSessions.count - Self.ownSessionMemory) }
    }

    /// The broker delivered a retained `session` on this speaker's own topic.
    /// Only from the second connection of a run on: on the first, the
    /// broker may still hold the payload of this speaker's previous run; on
    /// every later one it holds what this speaker republished on connecting —
    /// unless someone else has published since.
    /// `otherPublisher`: the message carries another process's publisher id
    /// (two speakers started together can publish byte-identical payloads).
    mutating func retainedSessionSeen(_ payload: [UInt8], otherPublisher: Bool) {
        if connections >= 2 && (otherPublisher || !ownSessions.contains(Self.digest(payload))) { foreignSessionSeen = true }
    }

    public init() {}

    /// The broker accepted the connection. Returns the log lines.
    mutating func connected(at now: MonotonicInstant) -> [(CoreLogLevel, String)] {
        connectedSince = now
        connections += 1
        guard !takeoverSuspected, let cleared = problem else { return [] }
        problem = nil
        return [(.warning, "connected to the broker again; cleared: \(cleared)")]
    }

    /// The connection dropped (before its cause arrives as `problem(_:at:)`).
    mutating func disconnected(at now: MonotonicInstant) {
        guard let since = connectedSince else { return }
        connectedSince = nil
        lastConnectionWasShort = now.nanoseconds(since: since) < UInt64(Self.stableMs) * 1_000_000
        shortConnectionsInARow = lastConnectionWasShort ? shortConnectionsInARow + 1 : 0
        if !lastConnectionWasShort {
            foreignSessionSeen = false
            if takeoverSuspected {
                takeoverSuspected = false
                problem = nil
            }
        }
    }

    /// Time passed while connected: a connection that has lasted `stableMs`
    /// ends a takeover episode. Returns the log lines.
    mutating func advance(to now: MonotonicInstant) -> [(CoreLogLevel, String)] {
        guard takeoverSuspected, let since = connectedSince,
              now.nanoseconds(since: since) >= UInt64(Self.stableMs) * 1_000_000 else { return [] }
        takeoverSuspected = false
        shortConnectionsInARow = 0
        foreignSessionSeen = false
        let cleared = problem.map { "\($0)" } ?? ConnectionProblem.Kind.takenOver.phrase
        problem = nil
        return [(.warning, "the connection has been stable for \(Self.stableMs / 1000) s; cleared: \(cleared)")]
    }

    /// When a takeover episode would end if the connection holds; nil when none is running.
    var stableDeadline: MonotonicInstant? {
        guard takeoverSuspected, let since = connectedSince else { return nil }
        return since.advanced(byMilliseconds: Self.stableMs)
    }

    /// The adapter's report of why it is not connected. `deviceID` names the
    /// likely culprit in the takeover warning. Returns the log lines.
    mutating func report(_ reported: ConnectionProblem, deviceID: String) -> [(CoreLogLevel, String)] {
        var problem = reported
        if problem.kind == .lost && lastConnectionWasShort && shortConnectionsInARow >= Self.takeoverAfter && foreignSessionSeen {
            problem = ConnectionProblem(kind: .takenOver, detail:
                "\(shortConnectionsInARow) connections in a row ended within \(Self.stableMs / 1000) s, "
                + "and the broker holds a session state on this speaker's topic that it did not publish")
        }
        lastConnectionWasShort = false
        if problem.kind == .takenOver {
            self.problem = problem
            guard !takeoverSuspected else { return [] }
            takeoverSuspected = true
            return [(.warning, "\(problem); is another speaker configured with device id \"\(deviceID)\"? "
                     + "Reconnecting every 2–5 s until a connection holds for \(Self.stableMs / 1000) s; each speaker needs its own device id")]
        }
        guard problem != self.problem, !takeoverSuspected else { return [] }
        self.problem = problem
        return [(.warning, "not connected to the broker: \(problem)")]
    }

    /// The MQTT part of systemd `STATUS=`.
    public func statusText(connected: Bool) -> String {
        if takeoverSuspected {
            return "MQTT: another client keeps taking over this speaker's session (same device id?)"
        }
        if connected { return "MQTT connected" }
        return problem.map { "MQTT not connected: \($0)" } ?? "MQTT connecting"
    }
}
