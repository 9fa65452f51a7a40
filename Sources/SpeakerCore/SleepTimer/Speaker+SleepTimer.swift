// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The sleep timer and mute composed with the rest of the speaker: their
/// commands, what the timer's end does to the transport, and what a press,
/// a knob turn or another command does while a timer runs.
///
/// - `setSleepTimer` applies only while playback is intended (a timer ends
///   playback; with nothing playing there is nothing to end) and replaces a
///   running timer; a fade under way ramps back first.
/// - A pause or stop (any source) cancels the timer: its job is done.
/// - During the fade, a short press of play/pause or of the encoder's switch
///   and a knob turn cancel the timer and ramp back to the level (someone is
///   awake at the speaker); the press does not pause. Commands over MQTT other
///   than pause/stop/timer commands leave the fade running: an automation
///   changing the volume does not mean someone is awake.
/// - At `endsAt` playback pauses, `{"source":"sleepTimer","name":"ended"}`
///   goes out on `event`, and the multiplier returns to 1 once the pause is done.
extension Speaker {
    /// Applies `setSleepTimer`, `cancelSleepTimer`, `mute` or `unmute`.
    mutating func applySleepTimerOrMute(_ command: Command, at now: MonotonicInstant)
        -> (outcome: ApplyOutcome, effects: [SpeakerEffect]) {
        switch command {
        case let .setSleepTimer(minutes, fadeSeconds):
            guard state.transport.session.intendsPlayback else {
                return (.rejected(.unsupported, "nothing is playing: a sleep timer ends playback, so it runs only while playing"), [])
            }
            let fade = min(fadeSeconds ?? config.sleepTimer.fadeSeconds, minutes * 60)
            return (.sleepTimerSet(fadeSeconds: fade), startSleepTimer(minutes: minutes, fadeSeconds: fade, at: now))
        case .cancelSleepTimer:
            guard state.sleepTimer.running != nil else { return (.done(level: nil), []) }
            var effects = state.sleepTimer.cancel(rampBack: true, tickets: &state.tickets)
            effects.append(.log(.info, "sleep timer cancelled"))
            return (.done(level: nil), effects)
        case .mute:
            return (.done(level: nil), state.mute.set(true))
        case .unmute:
            return (.done(level: nil), state.mute.set(false))
        default:
            return (.done(level: nil), [])
        }
    }

    /// Starts a timer now (replacing any) and begins its fade if it is due already.
    mutating func startSleepTimer(minutes: Int, fadeSeconds: Int, at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects = state.sleepTimer.set(minutes: minutes, fadeSeconds: fadeSeconds, at: now,
                                           wallNow: environment.wallClock(), clockSynced: environment.clockSynced(),
                                           tickets: &state.tickets)
        effects.append(.log(.info, "sleep timer: \(minutes) min, fade \(fadeSeconds) s"))
        return effects + advanceSleepTimer(to: now)
    }

    /// Runs the timer's deadlines and the cue's; at the end, pauses and
    /// publishes the event.
    mutating func advanceSleepTimer(to now: MonotonicInstant) -> [SpeakerEffect] {
        var effects = state.mute.advance(to: now)
        let step = state.sleepTimer.advance(to: now, tickets: &state.tickets)
        if state.schedule.fadingOut != nil {
            // A stop rule's fade-out already takes the one multiplier to
            // silence and ends the session: the timer's fade would replace
            // it (and its ending) with a slower one.
            effects += step.effects.filter { if case .audio(.longFade) = $0 { return false } else { return true } }
        } else {
            effects += step.effects
        }
        guard step.ended else { return effects }
        effects.append(.publish(Publication(topic: topics.event, payload: SpeakerEventPayload.sleepTimerEnded.serialized(),
                                            qos: 0, retain: false)))
        let pause = state.transport.apply(.pause, origin: nil, tickets: &state.tickets, context: transportContext, at: now)
        effects += pause.effects
        if !state.transport.session.isPlaying && state.transport.outstanding.isEmpty {
            // Already silent (the audio output failed meanwhile): reset the multiplier now.
            effects += state.sleepTimer.engineSettled(playing: false, tickets: &state.tickets)
        }
        return effects
    }

    /// After a transport command: a timer outlives no pause or stop.
    mutating func sleepTimerAfterTransport() -> [SpeakerEffect] {
        guard state.sleepTimer.running != nil, !state.transport.session.intendsPlayback else { return [] }
        return state.sleepTimer.cancel(rampBack: false, tickets: &state.tickets)
            + [.log(.info, "sleep timer cancelled: playback paused")]
    }

    /// A press or knob turn during the fade: cancels the timer and ramps
    /// back. True when it did (the press is then used up).
    mutating func awakeDuringFade(_ effects: inout [SpeakerEffect], by what: String) -> Bool {
        guard state.sleepTimer.running?.fading == true else { return false }
        effects += state.sleepTimer.cancel(rampBack: true, tickets: &state.tickets)
        effects.append(.log(.info, "sleep timer cancelled by \(what) during the fade"))
        return true
    }

    /// The encoder switch's long press: off → 15 → 30 → 60 → 90 → off. With
    /// nothing playing it starts playback with the first choice. Confirmed
    /// by the LED (one blink per step, one long blink for off) and a short dip.
    mutating func cycleSleepTimer(at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        let choice = state.transport.session.intendsPlayback ? state.sleepTimer.nextGestureChoice
            : SleepTimerState.gestureChoices[0]
        if let minutes = choice {
            if !state.transport.session.intendsPlayback {
                let (outcome, applied) = apply(.play, origin: nil, at: now)
                effects += applied
                if case .rejected(_, let message) = outcome {
                    effects.append(.log(.notice, "encoderSwitch long ignored: \(message)"))
                    state.statusLight.confirm(.longBlink, at: now)
                    return effects
                }
            }
            effects += startSleepTimer(minutes: minutes, fadeSeconds: min(config.sleepTimer.fadeSeconds, minutes * 60), at: now)
            let blinks = (SleepTimerState.gestureChoices.firstIndex(of: minutes) ?? 0) + 1
            state.statusLight.confirm(.blinks(blinks), at: now)
        } else {
            effects += state.sleepTimer.cancel(rampBack: true, tickets: &state.tickets)
            effects.append(.log(.info, "sleep timer off (encoderSwitch long)"))
            state.statusLight.confirm(.longBlink, at: now)
        }
        return effects + state.mute.cue(at: now)
    }
}
