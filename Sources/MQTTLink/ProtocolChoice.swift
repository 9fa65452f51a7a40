// SPDX-License-Identifier: Apache-2.0

/// Which MQTT protocol level the link's next CONNECT uses, decided from how
/// the broker answered the previous attempts. Pure; the network thread owns
/// the one instance (`MQTTLink.runNetwork`).
///
/// Brokers that speak only 3.1.1 answer a v5 CONNECT in one of two ways: the
/// 3.1.1 CONNACK "unacceptable protocol version" (mosquitto 1.x), or by
/// closing the socket without a byte of an answer (RabbitMQ 3.x's MQTT
/// plugin, some cloud IoT hubs). The first is an answer: the link falls back
/// for good. The second is ambiguous (a broker restarting, a proxy, a full
/// listen queue close the socket too), so 3.1.1 is *tried* for one attempt:
/// kept if the broker accepts it, else the next attempt is v5 again (a
/// 3.1.1 refusal, e.g. a bad password, is still reported). A level the
/// broker has answered with a CONNACK (accepted or refused) is kept for the
/// link's lifetime (the process): a later close is a lost connection, never
/// a reason to change level, so a broker that spoke v5 once is never
/// downgraded by a close. A restart probes v5 again (one extra connection
/// at start against a 3.1.1-only broker).
struct ProtocolChoice: Equatable {
    /// MQTT protocol levels the link speaks.
    enum Level: Int, Equatable {
        /// MQTT 3.1.1 (protocol level 4): no properties.
        case v311 = 4
        /// MQTT 5.
        case v5 = 5
    }

    /// How one connection attempt ended, as far as the protocol level is concerned.
    enum Outcome: Equatable {
        /// The broker accepted the connection.
        case accepted
        /// A CONNACK refused it for a reason other than the protocol version.
        case refused
        /// A CONNACK refused the protocol version (v5 132, or 3.1.1 `20 02 00 01`).
        case refusedVersion
        /// The TCP connection was made and then closed (EOF or reset) before any byte of an answer.
        case closedUnanswered
        /// Anything else (no TCP connection, TLS, timeout, a malformed answer): says nothing about the level.
        case failed
    }

    /// What a change of level is, for the log line and for whether to retry at once.
    enum Change: Equatable {
        /// v5 refused by the exact 3.1.1 refusal: 3.1.1 from now on.
        case fellBackOnRefusal
        /// v5 closed unanswered: 3.1.1 is tried next, at once.
        case triesV311AfterClose
        /// The tried 3.1.1 was accepted: kept for the link's lifetime.
        case keepsV311
        /// The tried 3.1.1 was not accepted: back to v5 (on the backoff).
        case returnsToV5
    }

    /// The level of the next CONNECT.
    private(set) var level: Level = .v5
    /// `level` is kept from now on: the broker answered it with a CONNACK
    /// (or refused v5 with the exact 3.1.1 refusal).
    private(set) var settled = false
    /// 3.1.1 is being tried, for one attempt, after a v5 CONNECT was closed unanswered.
    private(set) var tryingV311 = false

    /// Applies one attempt's outcome; returns the change of level or state
    /// worth logging, nil when nothing changed.
    mutating func after(_ outcome: Outcome) -> Change? {
        if tryingV311 {
            tryingV311 = false
            if outcome == .accepted {
                settled = true
                return .keepsV311
            }
            level = .v5
            return .returnsToV5
        }
        guard !settled else { return nil }
        switch outcome {
        case .accepted, .refused:
            settled = true
            return nil
        case .refusedVersion:
            level = .v311
            settled = true
            return .fellBackOnRefusal
        case .closedUnanswered:
            level = .v311
            tryingV311 = true
            return .triesV311AfterClose
        case .failed:
            return nil
        }
    }
}
