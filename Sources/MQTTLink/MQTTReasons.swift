// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CMosquitto
import SpeakerCore

/// Words for libmosquitto's return codes and for what the broker said, and
/// the classification of a failure into a `ConnectionProblem` for the core.
///
/// libmosquitto's own `mosquitto_strerror` reads `errno` for
/// `MOSQ_ERR_ERRNO` — on whatever thread calls it, long after the failure —
/// which produced texts like "No such file or directory (14)" for a lost
/// connection; and its texts for protocol errors are generic. Here `errno` is
/// captured by the network thread right after the failing call and passed
/// in. Pure functions; any thread.
enum MQTTReasons {
    /// Words for a `MOSQ_ERR_*` code; `savedErrno` is errno captured right
    /// after the call that returned `code` (used for `MOSQ_ERR_ERRNO` and
    /// `MOSQ_ERR_EAI`, where libmosquitto stores the getaddrinfo code in errno).
    static func text(for code: Int32, savedErrno: Int32 = 0) -> String {
        switch code {
        case 0: return "success"
        case Int32(MOSQ_ERR_NOMEM.rawValue): return "out of memory"
        case Int32(MOSQ_ERR_PROTOCOL.rawValue): return "protocol error: the broker sent a packet not allowed here"
        case Int32(MOSQ_ERR_INVAL.rawValue): return "invalid argument"
        case Int32(MOSQ_ERR_NO_CONN.rawValue): return "not connected"
        case Int32(MOSQ_ERR_CONN_REFUSED.rawValue): return "the broker refused the connection"
        case Int32(MOSQ_ERR_NOT_FOUND.rawValue): return "not found"
        case Int32(MOSQ_ERR_CONN_LOST.rawValue): return "the connection was closed"
        case Int32(MOSQ_ERR_TLS.rawValue): return "TLS error"
        case Int32(MOSQ_ERR_PAYLOAD_SIZE.rawValue): return "payload too large"
        case Int32(MOSQ_ERR_NOT_SUPPORTED.rawValue): return "not supported"
        case Int32(MOSQ_ERR_AUTH.rawValue): return "authentication failed"
        case Int32(MOSQ_ERR_ACL_DENIED.rawValue): return "denied by the broker's access control"
        case Int32(MOSQ_ERR_ERRNO.rawValue):
            return savedErrno == 0 ? "system error" : String(cString: strerror(savedErrno))
        case Int32(MOSQ_ERR_EAI.rawValue):
            return savedErrno == 0 ? "name lookup failed" : String(cString: gai_strerror(savedErrno))
        case Int32(MOSQ_ERR_PROXY.rawValue): return "SOCKS proxy error"
        case Int32(MOSQ_ERR_MALFORMED_UTF8.rawValue): return "malformed UTF-8 from the broker"
        case Int32(MOSQ_ERR_KEEPALIVE.rawValue): return "no answer from the broker within the keepalive interval"
        case Int32(MOSQ_ERR_LOOKUP.rawValue): return "DNS lookup failed"
        case Int32(MOSQ_ERR_MALFORMED_PACKET.rawValue): return "malformed packet from the broker"
        case Int32(MOSQ_ERR_DUPLICATE_PROPERTY.rawValue): return "duplicate MQTT v5 property from the broker"
        case Int32(MOSQ_ERR_TLS_HANDSHAKE.rawValue): return "TLS handshake failed"
        case Int32(MOSQ_ERR_QOS_NOT_SUPPORTED.rawValue): return "QoS not supported by the broker"
        case Int32(MOSQ_ERR_OVERSIZE_PACKET.rawValue): return "packet larger than the broker's maximum packet size"
        case Int32(MOSQ_ERR_OCSP.rawValue): return "OCSP check failed"
        case Int32(MOSQ_ERR_TIMEOUT.rawValue): return "timed out"
        case Int32(MOSQ_ERR_RETAIN_NOT_SUPPORTED.rawValue): return "retain not supported by the broker"
        case Int32(MOSQ_ERR_TOPIC_ALIAS_INVALID.rawValue): return "invalid topic alias from the broker"
        case Int32(MOSQ_ERR_ADMINISTRATIVE_ACTION.rawValue): return "administrative action by the broker"
        default: return "libmosquitto error \(code)"
        }
    }

    /// Words for an MQTT reason code from the broker (CONNACK or DISCONNECT),
    /// e.g. `Bad user name or password (134)`. `v311` reads a 3.1.1 CONNACK
    /// return code (1–5) instead.
    static func brokerReason(_ code: Int32, v311: Bool = false) -> String {
        if v311 {
            let words = [1: "unacceptable protocol version", 2: "identifier rejected", 3: "server unavailable",
                         4: "bad user name or password", 5: "not authorized"][Int(code)] ?? "refused"
            return "\(words) (3.1.1 code \(code))"
        }
        let text = mosquitto_reason_string(code).map { String(cString: $0) } ?? "reason"
        return "\(text) (\(code))"
    }

    /// The codes libmosquitto returns when the broker's bytes break the protocol.
    static func isMalformed(_ code: Int32) -> Bool {
        [MOSQ_ERR_PROTOCOL, MOSQ_ERR_MALFORMED_PACKET, MOSQ_ERR_MALFORMED_UTF8, MOSQ_ERR_DUPLICATE_PROPERTY,
         MOSQ_ERR_TOPIC_ALIAS_INVALID, MOSQ_ERR_QOS_NOT_SUPPORTED, MOSQ_ERR_RETAIN_NOT_SUPPORTED, MOSQ_ERR_NOMEM]
            .contains { Int32($0.rawValue) == code }
    }

    /// A connection attempt that failed before the broker accepted it.
    /// - Parameters:
    ///   - code: the `MOSQ_ERR_*` of the failing connect or loop call.
    ///   - savedErrno: errno right after that call.
    ///   - refusal: the CONNACK reason if the broker refused (0: none).
    ///   - v311: whether the attempt was MQTT 3.1.1 (after the fallback).
    ///   - libraryError: the last error line libmosquitto logged (OpenSSL's reason for TLS).
    /// - Returns: nil for a v5 refusal that the 3.1.1 fallback handles.
    static func attemptProblem(code: Int32, savedErrno: Int32, refusal: Int32, v311: Bool,
                               libraryError: String?) -> ConnectionProblem? {
        if refusal != 0 {
            let words = brokerReason(refusal, v311: v311)
            switch (refusal, v311) {
            case (134, false), (135, false), (4, true), (5, true):
                return ConnectionProblem(kind: .loginRejected, detail: words)
            case (132, false), (1, false):
                return nil  // the link falls back to 3.1.1 at once
            case (132, true), (1, true):
                return ConnectionProblem(kind: .protocolMismatch, detail: words)
            default:
                return ConnectionProblem(kind: .brokerRefused, detail: words)
            }
        }
        return problem(code: code, savedErrno: savedErrno, libraryError: libraryError, connected: false)
    }

    /// A failure of a connect or loop call (`connected`: the broker had accepted the connection).
    static func problem(code: Int32, savedErrno: Int32, libraryError: String?, connected: Bool) -> ConnectionProblem {
        let words = text(for: code, savedErrno: savedErrno)
        switch code {
        case Int32(MOSQ_ERR_EAI.rawValue), Int32(MOSQ_ERR_LOOKUP.rawValue):
            return ConnectionProblem(kind: .nameResolution, detail: words)
        case Int32(MOSQ_ERR_TLS.rawValue), Int32(MOSQ_ERR_TLS_HANDSHAKE.rawValue), Int32(MOSQ_ERR_OCSP.rawValue):
            return ConnectionProblem(kind: .tls, detail: libraryError ?? words)
        case Int32(MOSQ_ERR_KEEPALIVE.rawValue), Int32(MOSQ_ERR_TIMEOUT.rawValue):
            return ConnectionProblem(kind: .timeout, detail: connected ? words : "no CONNACK from the broker within the keepalive interval")
        case Int32(MOSQ_ERR_ERRNO.rawValue):
            switch savedErrno {
            case ECONNREFUSED: return ConnectionProblem(kind: .refused, detail: words)
            // libmosquitto sets EPROTO when OpenSSL fails (and has logged why).
            case EPROTO where libraryError != nil || !connected:
                return ConnectionProblem(kind: .tls, detail: libraryError ?? words)
            case ETIMEDOUT: return ConnectionProblem(kind: .timeout, detail: words)
            case ECONNRESET, EPIPE:
                return ConnectionProblem(kind: connected ? .lost : .unreachable, detail: words)
            default: return ConnectionProblem(kind: connected ? .lost : .unreachable, detail: words)
            }
        case _ where isMalformed(code):
            return ConnectionProblem(kind: .malformed, detail: words)
        default:
            // A TLS failure during the handshake surfaces as a lost connection; the library said why.
            if !connected, let libraryError { return ConnectionProblem(kind: .tls, detail: libraryError) }
            return ConnectionProblem(kind: .lost, detail: connected ? words : "\(words) before the broker answered")
        }
    }

    /// The cause of the end of an established connection, from libmosquitto's
    /// on_disconnect code: a broker DISCONNECT reason (≥ 128; 142 = session
    /// taken over) or a `MOSQ_ERR_*`.
    static func lossProblem(code: Int32, savedErrno: Int32) -> ConnectionProblem {
        if code == 142 { return ConnectionProblem(kind: .takenOver, detail: "the broker said " + brokerReason(code)) }
        if code >= 128 { return ConnectionProblem(kind: .lost, detail: "the broker disconnected: " + brokerReason(code)) }
        return problem(code: code, savedErrno: savedErrno, libraryError: nil, connected: true)
    }
}
