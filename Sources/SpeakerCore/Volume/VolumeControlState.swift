// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The level as far as the speaker knows it: a number only for absolute hardware.
public enum VolumeState: Equatable, Sendable {
    case absolute(level: Double)
    case relative
}

/// A mixer write waiting for its confirmation.
struct PendingLevel: Equatable, Sendable {
    var level: Double
    var origin: PendingCommand?
}

/// One reading of the mixer element: its dB, nil when muted.
struct MixerReading: Equatable, Sendable {
    var db: Double?

    /// Equal within 0.005 dB (both muted counts as equal).
    func matches(_ other: Double?) -> Bool {
        switch (db, other) {
        case (nil, nil): return true
        case let (x?, y?): return abs(x - y) < 0.005
        default: return false
        }
    }
}

/// The volume domain: the level (or none, on step-only hardware), the mixer
/// writes waiting for confirmation (`alsa-mixer`) and the element's last
/// reading. Its reducer is in `VolumeControlState+Reduce`.
public struct VolumeControlState: Equatable, Sendable {
    public var level: VolumeState
    /// Mixer writes not yet confirmed: the level asked for and the command (if any) that asked.
    var pendingLevels: [UInt64: PendingLevel] = [:]
    /// The mixer element's last reading (`alsa-mixer`), to tell the
    /// speaker's own change notifications from a change made elsewhere.
    var lastMixerReading: MixerReading?

    init(level: VolumeState) { self.level = level }

    /// Rounds a level to 4 decimals so repeated steps publish `0.45`, not `0.45000000000000007`.
    static func tidy(_ level: Double) -> Double { (level * 10_000).rounded() / 10_000 }
}

/// A volume command (the level half of `Command`).
enum VolumeCommand: Equatable {
    case set(Double)
    case step(Int)
}

/// One volume reduction: its effects in order, the command's outcome, and a
/// command a mixer report completed (its result waits for the publication)
/// or refused (its result goes out now).
struct VolumeStep {
    var effects: [SpeakerEffect] = []
    var outcome = ApplyOutcome.done(level: nil)
    var completed: AwaitingResult?
    var refused: (origin: PendingCommand, message: String)?
}
