// SPDX-License-Identifier: Apache-2.0
/// Why the speaker is not (or no longer) connected to its broker, as the MQTT
/// adapter saw it: a failed connection attempt, or the cause of a loss. The
/// adapter classifies what the library and the broker said; the core decides
/// what to log and show (`BrokerHealth`). Pure value; any thread.
public struct ConnectionProblem: Equatable, Sendable, CustomStringConvertible {
    /// The distinct causes, each logged once when it starts and once when it clears.
    public enum Kind: String, Equatable, Sendable, CaseIterable {
        /// The broker's host name does not resolve (DNS, /etc/hosts).
        case nameResolution
        /// Nothing listens on the broker's port (TCP RST: ECONNREFUSED).
        case refused
        /// No answer in time: TCP connect, or no CONNACK / PINGRESP within the keepalive.
        case timeout
        /// The network or host is unreachable, or another socket error.
        case unreachable
        /// The TLS handshake failed (certificate verification, protocol); `detail` is the library's reason.
        case tls
        /// The broker rejected the user name / password or the client (CONNACK 134, 135, 3.1.1: 4, 5).
        case loginRejected
        /// The broker accepts neither MQTT v5 nor 3.1.1 (CONNACK 132, 3.1.1: 1, after the fallback).
        case protocolMismatch
        /// The broker refused the connection for another reason (busy, banned, unavailable…).
        case brokerRefused
        /// The broker sent a malformed or forbidden packet; the library dropped the connection.
        case malformed
        /// An established connection ended (the broker closed it, a reset, the network).
        case lost
        /// Another client with the same client id took the session over (v5 DISCONNECT 142,
        /// or inferred by `BrokerHealth` from repeated short connections).
        case takenOver
    }

    /// Which cause.
    public var kind: Kind
    /// The library's, the system's or the broker's reason in words
    /// ("certificate verify failed", "Bad user name or password (134)").
    public var detail: String

    /// Creates a problem report.
    public init(kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// One phrase for logs and systemd `STATUS=`, e.g.
    /// `the broker rejected the login: Bad user name or password (134)`.
    public var description: String { "\(kind.phrase): \(detail)" }
}

extension ConnectionProblem.Kind {
    /// What the cause means, in words.
    public var phrase: String {
        switch self {
        case .nameResolution: return "cannot resolve the broker's host name"
        case .refused: return "the broker's port refuses connections"
        case .timeout: return "timed out"
        case .unreachable: return "cannot reach the broker"
        case .tls: return "TLS failed"
        case .loginRejected: return "the broker rejected the login"
        case .protocolMismatch: return "the broker speaks neither MQTT v5 nor 3.1.1"
        case .brokerRefused: return "the broker refused the connection"
        case .malformed: return "the broker sent an invalid packet"
        case .lost: return "connection lost"
        case .takenOver: return "another client with this speaker's client id took over its session"
        }
    }
}
