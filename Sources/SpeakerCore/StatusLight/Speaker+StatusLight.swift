// SPDX-License-Identifier: Apache-2.0
/// The status LED composed from the other domains' facts.
extension Speaker {
    /// After every action: the pattern for the state now, sent to the board
    /// when it changed (only with `statusLed` configured).
    mutating func statusLedIfChanged(at now: MonotonicInstant) -> [SpeakerEffect] {
        guard config.statusLed != nil else { return [] }
        let problem = state.transport.audio == .unavailable || state.publishing.withheldRejection != nil
        let pattern = state.statusLight.pattern(at: now, problem: problem, timerRunning: state.sleepTimer.running != nil,
                                                playing: state.transport.session.intendsPlayback)
        return state.statusLight.show(pattern)
    }
}
