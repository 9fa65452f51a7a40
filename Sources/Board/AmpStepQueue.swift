// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// The pending pulses of a step-only amplifier (`volume.mode: "gpio-step"`),
/// as pure state shared by both boards: the knob or `volumeUp/Down` adds
/// pulses faster than the amp accepts them (one per `pulseMs + gapMs`), so
/// the queue is **coalesced** — pending UP and DOWN pulses cancel, only the
/// net direction is kept — and **bounded** at `maxPending`; pulses beyond the
/// bound are dropped (the amp's own range saturates anyway).
/// Value type; no I/O, no time. Used on the loop thread by ``AmpStepper``.
public struct AmpStepQueue: Equatable, Sendable {
    /// At most this many pulses wait (not counting one in flight).
    public let maxPending: Int
    /// Net pending pulses: positive = UP, negative = DOWN.
    public private(set) var pending: Int = 0

    public init(maxPending: Int) {
        self.maxPending = max(1, maxPending)
    }

    /// Adds `pulse`; returns how many of its pulses were dropped by the bound.
    @discardableResult
    public mutating func add(_ pulse: AmpPulse) -> Int {
        let delta: Int
        switch pulse {
        case .up(let n): delta = max(0, n)
        case .down(let n): delta = -max(0, n)
        }
        let wanted = pending + delta
        let bounded = min(maxPending, max(-maxPending, wanted))
        pending = bounded
        return abs(wanted - bounded)
    }

    /// Takes the next pulse: true = UP, false = DOWN, nil when empty.
    public mutating func take() -> Bool? {
        if pending > 0 { pending -= 1; return true }
        if pending < 0 { pending += 1; return false }
        return nil
    }
}
