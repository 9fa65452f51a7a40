// SPDX-License-Identifier: Apache-2.0
/// The reconnect schedule: capped exponential backoff with jitter.
///
/// Attempt *k* (0-based, counted since the last established connection)
/// waits a uniformly random time in `[c/2, c]` where
/// `c = min(maximum, minimum · 2^k)`, never less than `minimum`. With the
/// contract's 0.5 s … 30 s that is 0.5 s, 0.5–1 s, 1–2 s, … up to 15–30 s:
/// a fleet of speakers that lost the same broker does not come back in
/// lock-step. Pure value; used by the link's network thread only.
public struct ReconnectBackoff: Sendable, Equatable {
    /// Floor (and first delay), milliseconds.
    public let minimumMs: Int
    /// Cap of the exponential, milliseconds.
    public let maximumMs: Int
    /// Failed attempts since the last established connection.
    public private(set) var attempt = 0

    /// `minimumSeconds` is at least 1 ms; `maximumSeconds` at least the minimum.
    public init(minimumSeconds: Double, maximumSeconds: Double) {
        minimumMs = max(1, Int((minimumSeconds * 1000).rounded()))
        maximumMs = max(minimumMs, Int((maximumSeconds * 1000).rounded()))
    }

    /// The delay before the next attempt, and counts the attempt.
    public mutating func nextDelayMs<R: RandomNumberGenerator>(using random: inout R) -> Int {
        var ceiling = minimumMs
        var k = 0
        while k < attempt && ceiling < maximumMs {
            ceiling = min(maximumMs, ceiling * 2)
            k += 1
        }
        attempt += 1
        let low = max(minimumMs, ceiling / 2)
        return low >= ceiling ? ceiling : Int.random(in: low...ceiling, using: &random)
    }

    /// The delay before the next attempt, from the system's random source.
    public mutating func nextDelayMs() -> Int {
        var random = SystemRandomNumberGenerator()
        return nextDelayMs(using: &random)
    }

    /// A connection was established: the next loss starts again at the floor.
    public mutating func reset() { attempt = 0 }
}
