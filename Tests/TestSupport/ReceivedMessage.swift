// SPDX-License-Identifier: Apache-2.0
/// A message a `TestPeer` received, with its MQTT v5 properties and the
/// monotonic time it arrived (for latency measurements).
public struct ReceivedMessage: Sendable, Equatable {
    /// Topic it was published to.
    public var topic: String
    /// Payload bytes as received.
    public var payload: [UInt8]
    /// QoS it was delivered with.
    public var qos: Int
    /// Whether the broker delivered it as retained (a stored value, not a live publish).
    public var retain: Bool
    /// MQTT v5 Response Topic, if set.
    public var responseTopic: String?
    /// MQTT v5 Correlation Data, if set.
    public var correlationData: [UInt8]?
    /// `CLOCK_MONOTONIC` nanoseconds when the peer's callback saw it.
    public var receivedAtNanoseconds: UInt64

    /// The payload decoded as UTF-8 (invalid bytes replaced).
    public var payloadString: String { String(decoding: payload, as: UTF8.self) }
}
