// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The schedule domain composed with the others: when the rules are
/// evaluated (start, their deadline, a clock step, a change of rules or
/// configuration), what a rule does when it fires (transport and volume),
/// and the night cap's hold on the level.
extension Speaker {
    /// What the clock says now, for one evaluation (the environment's wall
    /// clock and sync flag; the zone the host read for the configuration).
    var clockFacts: ScheduleState.ClockFacts {
        ScheduleState.ClockFacts(wall: environment.wallClock(), synced: environment.clockSynced(),
                                 requireSync: config.clock.requireSync, zone: config.clock.zone)
    }

    /// The volume settings with the cap in force now (`volume.maxLevel`,
    /// lowered by an active night cap): every level the speaker sets goes
    /// through them, so `setVolume` and the knob clamp to the cap.
    var cappedVolume: VolumeSection {
        var volume = config.volume
        volume.maxLevel = state.schedule.maxLevel(volumeMaxLevel: config.volume.maxLevel)
        return volume
    }

    /// Takes the rules and the night cap from the configuration, or from
    /// what was set over MQTT while the configuration still says what it
    /// said then (last writer wins), and evaluates.
    mutating func resolveScheduleConfig(at now: MonotonicInstant, clampAtOnce: Bool = false) -> [SpeakerEffect] {
        let rules = ConfigOverride.resolve(state.schedule.rulesOverride, configured: config.schedules)
        state.schedule.rules = rules.value
        state.schedule.rulesOverride = rules.kept
        let cap = ConfigOverride.resolve(state.schedule.nightCapOverride, configured: config.volume.night)
        state.schedule.nightCap = config.volume.mode == .gpioStep ? nil : cap.value
        state.schedule.nightCapOverride = cap.kept
        return evaluateSchedule(at: now, clampAtOnce: clampAtOnce)
    }

    /// Evaluates the schedule now: fires what is due, then holds the level
    /// under the night cap (a slow ramp down when its window opens above it).
    mutating func evaluateSchedule(at now: MonotonicInstant, clampAtOnce: Bool = false) -> [SpeakerEffect] {
        let wasActive = state.schedule.nightActive
        var effects: [SpeakerEffect] = []
        for occurrence in state.schedule.evaluate(clockFacts, at: now) {
            effects += fire(state.schedule.rules[occurrence.rule], index: occurrence.rule, occurrence: occurrence.at, at: now)
        }
        if state.schedule.nightActive != wasActive {
            effects.append(.log(.info, state.schedule.nightActive ? "night cap on: level at most \(cappedVolume.maxLevel)" : "night cap off"))
        }
        effects += holdNightCap(at: now, atOnce: clampAtOnce)
        return effects
    }

    /// Runs the schedule's deadline and the night cap's ramp when due (`.tick`).
    mutating func scheduleTick(at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        if let due = state.schedule.deadline, due <= now { effects += evaluateSchedule(at: now) }
        if let ramp = state.schedule.rampAt, ramp <= now { effects += holdNightCap(at: now, atOnce: false) }
        return effects
    }

    /// The wall clock was set (NTP at boot, by hand): evaluate at once, so a
    /// rule due at the new time fires now and the next deadline follows the new time.
    mutating func clockStepped(at now: MonotonicInstant) -> [SpeakerEffect] {
        let before = state.schedule.through
        var effects = evaluateSchedule(at: now)
        let after = state.schedule.through
        if !state.schedule.trusted {
            // NTP steps the clock first and marks it synchronised right after
            // (the step itself clears the kernel's sync flag): look again soon.
            state.schedule.deadline = now.advanced(byMilliseconds: Int(ScheduleClock.stepRecheckMs))
        }
        effects.insert(.log(.info, "wall clock stepped (schedule through \(before.map(String.init) ?? "-") → \(after.map(String.init) ?? "-"))"), at: 0)
        return effects
    }

    /// The kernel's sync flag changed: evaluate with it, so rules wait no
    /// longer than the change (and `schedules` publishes the new flag).
    mutating func clockSyncChanged(at now: MonotonicInstant) -> [SpeakerEffect] {
        let effects = evaluateSchedule(at: now)
        return [.log(.info, "wall clock \(state.schedule.synced ? "synchronised" : "no longer synchronised")")] + effects
    }

    /// The level above the cap in force comes down: at once (start-up, before
    /// anything is heard), else by `nightRampStep` every `nightRampIntervalMs`.
    private mutating func holdNightCap(at now: MonotonicInstant, atOnce: Bool) -> [SpeakerEffect] {
        let cap = cappedVolume.maxLevel
        // Only the night cap ramps: a lower volume.maxLevel from a reload clamps at once (`reconfigure`).
        guard state.schedule.nightActive, case .absolute(let level) = state.volume.level, level > cap else {
            state.schedule.rampAt = nil
            return []
        }
        if let due = state.schedule.rampAt, due > now, !atOnce { return [] }
        let target = atOnce ? cap : max(cap, VolumeControlState.tidy(level - Self.nightRampStep))
        var uncapped = config.volume
        uncapped.maxLevel = max(target, cap)
        let step = state.volume.apply(.set(target), origin: nil, tickets: &state.tickets, config: uncapped)
        state.schedule.rampAt = target > cap ? now.advanced(byMilliseconds: Self.nightRampIntervalMs) : nil
        return step.effects
    }

    /// The night cap's ramp: 0.02 a second, e.g. from 0.8 down to 0.3 in 25 s.
    static let nightRampStep = 0.02
    static let nightRampIntervalMs = 1000

    /// What a rule does when its time comes: `play` sets its level (under
    /// the cap), selects its sound and — when nothing was playing — starts
    /// at a long-fade multiplier of 0 and fades it to 1 over `fadeSeconds`;
    /// `stop` fades the multiplier to 0 over `fadeSeconds`, then ends the
    /// session (`scheduleFadeDone`). A rule that cannot act (audio
    /// unavailable) is logged.
    /// The log line names the occurrence (its Unix time), so that a reader
    /// of the log can tell that none fired twice.
    private mutating func fire(_ rule: ScheduleRule, index: Int, occurrence: Int64, at now: MonotonicInstant) -> [SpeakerEffect] {
        let when = WallClockReading(seconds: occurrence, milliseconds: 0).iso8601
        var effects: [SpeakerEffect] = [.log(.info, "schedule rule \(index) (\(rule.action.rawValue) at \(rule.at), occurrence \(occurrence) = \(when)) fires")]
        let fadeMs = rule.fadeSeconds * 1000
        let audible = state.transport.session.intendsPlayback
        switch rule.action {
        case .stop:
            guard audible else { return effects }
            if fadeMs == 0 { return effects + endByRule(index, at: now) }
            let ticket = state.tickets.issue()
            state.schedule.fadingOut = ScheduleState.FadeOut(ticket: ticket, rule: index)
            effects.append(.audio(.longFade(to: 0, overMs: fadeMs, ticket: ticket)))
        case .play:
            effects += cancelScheduleFade()
            if let level = rule.level, case .absolute = state.volume.level {
                effects += state.volume.apply(.set(level), origin: nil, tickets: &state.tickets, config: cappedVolume).effects
            }
            var command = TransportCommand.play
            if let sound = rule.soundID {
                if state.transport.catalog.contains(where: { $0.id == sound }) {
                    command = .select(soundID: sound)
                } else {
                    effects.append(.log(.warning, "schedule rule \(index): no sound \"\(sound)\"; playing the selected one"))
                }
            }
            let fadeIn = !audible && fadeMs > 0 && state.transport.audio == .ok
            if fadeIn { effects.append(.audio(.longFade(to: 0, overMs: 0, ticket: state.tickets.issue()))) }
            let step = state.transport.apply(command, origin: nil, tickets: &state.tickets, context: transportContext, at: now)
            effects += step.effects
            if case .rejected(_, let message) = step.outcome {
                effects.append(.log(.warning, "schedule rule \(index) could not play: \(message)"))
                if fadeIn { effects.append(.audio(.longFade(to: 1, overMs: 0, ticket: state.tickets.issue()))) }
            } else if fadeIn {
                effects.append(.audio(.longFade(to: 1, overMs: fadeMs, ticket: state.tickets.issue())))
            }
        }
        return effects
    }

    /// A long fade finished: the end of a `stop` rule's fade-out ends the
    /// session; any other ticket is not the schedule's (nil).
    mutating func scheduleFadeDone(ticket: UInt64, at now: MonotonicInstant) -> [SpeakerEffect]? {
        guard let fade = state.schedule.fadingOut, fade.ticket == ticket else { return nil }
        state.schedule.fadingOut = nil
        return endByRule(fade.rule, at: now)
    }

    /// Ends the session for a `stop` rule: at once (the fade-out already
    /// made it silent), then puts the long-fade multiplier back to 1 while
    /// paused, so the next play is heard at its level.
    private mutating func endByRule(_ index: Int, at now: MonotonicInstant) -> [SpeakerEffect] {
        var context = transportContext
        context.fadeMs = 0
        let step = state.transport.apply(.stop, origin: nil, tickets: &state.tickets, context: context, at: now)
        return step.effects + [.audio(.longFade(to: 1, overMs: 0, ticket: state.tickets.issue())),
                               .log(.info, "schedule rule \(index): playback stopped")]
    }

    /// A listener's command or gesture during a `stop` rule's fade-out
    /// cancels it: the multiplier returns to 1 over a second, and playback goes on.
    mutating func cancelScheduleFade() -> [SpeakerEffect] {
        guard state.schedule.fadingOut != nil else { return [] }
        state.schedule.fadingOut = nil
        return [.audio(.longFade(to: 1, overMs: Self.fadeCancelMs, ticket: state.tickets.issue())),
                .log(.info, "schedule fade-out cancelled")]
    }

    static let fadeCancelMs = 1000

    /// `setSchedules`, `setScheduleEnabled`, `setNightCap`: validated like
    /// the config file, kept over the config's value until that changes.
    mutating func applyScheduleCommand(_ command: Command, at now: MonotonicInstant) -> (outcome: ApplyOutcome, effects: [SpeakerEffect]) {
        switch command {
        case .setSchedules(let value):
            let rules: [ScheduleRule]
            do {
                rules = try ScheduleRule.parseList(value, path: "schedules", relativeVolume: config.volume.mode == .gpioStep)
            } catch {
                return (.rejected(error.commandCode, error.description), [])
            }
            for (i, rule) in rules.enumerated() {
                if let sound = rule.soundID, !state.transport.catalog.contains(where: { $0.id == sound }) {
                    return (.rejected(.unknownSound, "schedules[\(i)].soundID: no sound \"\(sound)\" in the catalog"), [])
                }
            }
            state.schedule.rulesOverride = ConfigOverride(value: rules, over: config.schedules)
        case let .setScheduleEnabled(index, enabled):
            guard index < state.schedule.rules.count else {
                return (.rejected(.invalidValue, "index: no rule \(index) (there are \(state.schedule.rules.count))"), [])
            }
            var rules = state.schedule.rules
            rules[index].enabled = enabled
            state.schedule.rulesOverride = ConfigOverride(value: rules, over: config.schedules)
        case .setNightCap(let value):
            guard config.volume.mode != .gpioStep else {
                return (.rejected(.unsupported, "nightCap: volume.mode gpio-step has no level to cap"), [])
            }
            let cap: NightCap?
            do {
                cap = try NightCap.parse(value, path: "nightCap", volumeMaxLevel: config.volume.maxLevel, relativeVolume: false)
            } catch {
                return (.rejected(error.commandCode, error.description), [])
            }
            state.schedule.nightCapOverride = ConfigOverride(value: cap, over: config.volume.night)
        default:
            return (.done(level: nil), [])
        }
        return (.done(level: nil), resolveScheduleConfig(at: now))
    }
}

extension Command {
    /// A listener's transport or volume command: it ends a `stop` rule's fade-out.
    var cancelsScheduleFade: Bool {
        switch self {
        case .play, .pause, .toggle, .stop, .next, .previous, .select, .setVolume, .volumeUp, .volumeDown: return true
        case .setSchedules, .setScheduleEnabled, .setNightCap, .saveMix, .deleteMix: return false
        case .setLayerLevel, .setSleepTimer: return true
        case .cancelSleepTimer, .mute, .unmute: return false
        }
    }
}
