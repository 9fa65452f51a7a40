import SpeakerProtocol

extension Speaker {
    /// Takes over a level set outside the speaker (alsa-mixer mode: someone
    /// moved the mixer element). The level is published like any other
    /// change; one above `volume.maxLevel` is turned back down to it.
    /// Ignored on step-only hardware, which has no level.
    mutating func adoptOutsideLevel(_ reported: Double) {
        guard case .absolute(let current) = state.volume, reported.isFinite else { return }
        let level = Self.tidy(min(max(reported, 0), config.volume.maxLevel))
        if level < reported {
            effects.append(.log(.notice, "volume set to \(reported) outside the speaker; limited to maxLevel \(level)"))
            if config.volume.mode == .alsaMixer {
                // The element is at `reported` until the write back down is confirmed.
                state.volume = .absolute(level: Self.tidy(min(max(reported, 0), 1)))
                requestMixerLevel(level, origin: nil)
                return
            }
            effects.append(.audio(.setLevel(level)))
        }
        if level != current { state.volume = .absolute(level: level) }
    }
}
