#if canImport(Glibc)
import Glibc
#endif

/// Evidence that a broker speaks only MQTT 3.1.1: the reply to our v5
/// CONNECT is the 3.1.1 CONNACK "unacceptable protocol version", exactly
/// `20 02 00 01` (packet type CONNACK, remaining length 2, session present 0,
/// return code 1). A v5 CONNACK can never look like that — its property
/// length is mandatory, so its remaining length is at least 3.
///
/// Why the link looks at the bytes itself: libmosquitto 2.0.11 (bookworm)
/// reports this reply to `on_connect` as reason 132 ("unsupported protocol
/// version"), but since 2.0.12 its varint reader returns
/// `MOSQ_ERR_MALFORMED_PACKET` instead of `MOSQ_ERR_PROTOCOL`, so
/// `handle__connack` skips that callback and only the disconnect (rc 21,
/// malformed packet) is reported — libmosquitto 2.0.21 on trixie. A
/// malformed-packet error alone is not enough to fall back: a v5 broker that
/// sends a broken CONNACK would then be spoken to as 3.1.1 for the link's
/// whole life. So the network thread peeks (`MSG_PEEK`, nothing consumed) at
/// the first bytes of a plain-TCP reply while it waits for a CONNACK, and
/// falls back only when they are this refusal. Over TLS the bytes on the
/// socket are encrypted; there only libmosquitto's own report (2.0.11) counts.
enum MQTT311Refusal {
    /// The 3.1.1 CONNACK refusing the protocol level, byte for byte.
    static let connack: [UInt8] = [0x20, 0x02, 0x00, 0x01]

    /// True if `bytes` (the start of what the broker sent) is the refusal.
    static func matches(_ bytes: [UInt8]) -> Bool {
        bytes.count >= connack.count && Array(bytes.prefix(connack.count)) == connack
    }

    /// Peeks at up to four pending bytes on `socket` without consuming them
    /// (non-blocking) and tells whether they are the refusal. Network thread.
    static func isPending(on socket: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: connack.count)
        let n = bytes.withUnsafeMutableBytes {
            recv(socket, $0.baseAddress, $0.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
        }
        return n == connack.count && matches(bytes)
    }
}
