// SPDX-License-Identifier: Apache-2.0
/// The mute domain: whether the stream is silenced, and the short audible
/// cue that confirms a gesture (a brief dip of the stream to silence).
///
/// Mute is software silence of the stream in every volume mode: the engine's
/// mute stage ramps to 0 and back (`AudioRequest.setMuted`), the level — a
/// software gain, an ALSA mixer value or an amplifier's unknown step — is
/// untouched, so unmuting returns exactly to it and a step-only amplifier is
/// never sent pulses (no level is invented). Not kept across a restart: a
/// speaker that starts silent for no visible reason is worse than one that
/// forgets a mute.
public struct MuteState: Equatable, Sendable {
    /// How long the cue's dip lasts before the stream returns.
    public static let cueMs = 250

    /// The stream is silenced.
    public var muted = false
    /// A cue's dip is under way; the stream returns at this instant.
    var cueEndsAt: MonotonicInstant?

    public init() {}

    /// Mutes or unmutes (idempotent: no effect when already so).
    mutating func set(_ muted: Bool) -> [SpeakerEffect] {
        guard muted != self.muted else { return [] }
        self.muted = muted
        cueEndsAt = nil
        return [.audio(.setMuted(muted)), .log(.info, muted ? "muted" : "unmuted")]
    }

    /// Starts the confirmation cue (nothing while muted or during a cue).
    mutating func cue(at now: MonotonicInstant) -> [SpeakerEffect] {
        guard !muted, cueEndsAt == nil else { return [] }
        cueEndsAt = now.advanced(byMilliseconds: Self.cueMs)
        return [.audio(.setMuted(true))]
    }

    /// Ends a cue whose dip is over.
    mutating func advance(to now: MonotonicInstant) -> [SpeakerEffect] {
        guard let end = cueEndsAt, end <= now else { return [] }
        cueEndsAt = nil
        return muted ? [] : [.audio(.setMuted(false))]
    }
}
