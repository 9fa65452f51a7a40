// SPDX-License-Identifier: Apache-2.0
/// The master gain's long fade and mute stages (`MasterGain`): requested like
/// `setGain`, so a rewind restores them with the rest of the master state.
/// Owning thread only; real-time safe.
extension AmbienceRenderer {
    /// Moves the long fade's multiplier to `multiplier` in [0, 1] along the
    /// volume curve over `frames` (at once when 0), from where it is now
    /// (see `LongFade`). The stage advances only while audio is rendered: a
    /// fade asked while paused continues when playback resumes.
    public func longFade(to multiplier: Double, frames: Int) {
        history.requestApplied()
        master.startLongFade(to: multiplier, frames: frames)
    }

    /// Ramps the mute multiplier to silence (`muted`) or back over `rampFrames`.
    public func setMuted(_ muted: Bool, rampFrames: Int) {
        history.requestApplied()
        master.setMuted(muted, rampFrames: rampFrames)
    }

    /// True while the long fade moves.
    public var isLongFading: Bool { master.isLongFading }
    /// The long fade's current multiplier.
    public var longFadeMultiplier: Float { master.longFade.gain }
    /// The mute stage's target: true when muting or muted.
    public var isMuted: Bool { master.mute.target <= 0 }
}
