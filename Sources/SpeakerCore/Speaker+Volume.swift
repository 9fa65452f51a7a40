import SpeakerProtocol

extension Speaker {
    /// Rounds a level to 4 decimals so repeated steps publish `0.45`, not `0.45000000000000007`.
    static func tidy(_ level: Double) -> Double { (level * 10_000).rounded() / 10_000 }

    /// Sets an absolute level, clamped to [0, maxLevel]. Unsupported on
    /// step-only hardware, where no level exists.
    mutating func setVolume(_ requested: Double) -> ApplyOutcome {
        guard case .absolute = state.volume else {
            return .rejected(.unsupported, "this speaker's volume is step-only (relative); use volumeUp/volumeDown")
        }
        let level = Self.tidy(min(max(requested, 0), config.volume.maxLevel))
        applyLevel(level)
        return .done(level: level)
    }

    /// Moves the volume by `steps` (knob detents after acceleration, or a
    /// command's steps): a level change on absolute hardware, amp pulses on
    /// step-only hardware.
    mutating func stepVolume(by steps: Int) -> ApplyOutcome {
        guard steps != 0 else { return .done(level: nil) }
        switch state.volume {
        case .absolute(let current):
            let level = Self.tidy(min(max(current + Double(steps) * config.volume.step, 0), config.volume.maxLevel))
            applyLevel(level)
            return .done(level: level)
        case .relative:
            effects.append(.amp(steps > 0 ? .up(count: steps) : .down(count: -steps)))
            return .done(level: nil)
        }
    }

    private mutating func applyLevel(_ level: Double) {
        guard case .absolute(let current) = state.volume, current != level else { return }
        state.volume = .absolute(level: level)
        effects.append(.audio(.setLevel(level)))
    }
}
