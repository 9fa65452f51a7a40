// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// One edge waiting on the simulated board's schedule: the instant
/// (nanoseconds on the monotonic clock), the line and its new logical level.
struct ScheduledEdge: Equatable, Sendable {
    var at: UInt64
    var line: InputLine
    var isActive: Bool
}

/// Turns one clean edge into a realistic contact-bounce burst: 3 or 5
/// alternating level changes, 80–200 µs apart (at most 0.8 ms in all),
/// starting at the intended instant and ending at the intended level.
/// Deterministic for a given seed (SplitMix64). Value type; one thread.
struct ContactBounce: Sendable {
    private var state: UInt64

    /// A generator seeded with `seed`.
    init(seed: UInt64) { state = seed }

    /// The burst replacing `edge` (its first change is at `edge.at`).
    mutating func burst(for edge: ScheduledEdge) -> [ScheduledEdge] {
        let changes = next() % 2 == 0 ? 3 : 5
        var at = edge.at
        var burst: [ScheduledEdge] = []
        for index in 0..<changes {
            // Odd count, alternating, so the last change lands on edge.isActive.
            let level = index % 2 == 0 ? edge.isActive : !edge.isActive
            burst.append(ScheduledEdge(at: at, line: edge.line, isActive: level))
            at += 80_000 + next() % 120_001
        }
        return burst
    }

    /// SplitMix64.
    private mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
