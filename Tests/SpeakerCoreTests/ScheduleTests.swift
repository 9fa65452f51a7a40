// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// Schedules on manual time, in real zones: each occurrence fires exactly
/// once across DST changes, clock steps and restarts; nothing fires while
/// the clock is not trusted; a rule missed during a step fires only within
/// the catch-up window.
@Suite struct ScheduleTests {
    static let daily0230 = #"[{"at":"02:30","action":"play","fadeSeconds":0}]"#

    /// Runs `hours` of time from a start at `from`, returning each firing's wall instant.
    func fireTimes(zoneName: String, rules: String, from: Int64, hours: Int64) -> [Int64] {
        var s = ScheduleHarness(clock: TestWallClock(seconds: from), zoneName: zoneName, rules: rules)
        var times: [Int64] = []
        s.start()
        for _ in 0..<(hours * 60) {
            let fx = s.pass(seconds: 60)
            if !fx.firedRules.isEmpty { times += fx.firedRules.map { _ in s.clock.seconds } }
        }
        return times
    }

    @Test(arguments: [
        // zone, the rule's local time, a day before the change (UTC), the expected instants (UTC)
        ("Europe/Berlin", "02:30", utcSeconds(2026, 3, 28, 12, 0), [utcSeconds(2026, 3, 29, 1, 30), utcSeconds(2026, 3, 30, 0, 30)]),
        ("Europe/Berlin", "02:30", utcSeconds(2026, 10, 24, 12, 0), [utcSeconds(2026, 10, 25, 0, 30), utcSeconds(2026, 10, 26, 1, 30)]),
        ("America/New_York", "02:30", utcSeconds(2026, 3, 7, 17, 0), [utcSeconds(2026, 3, 8, 7, 30), utcSeconds(2026, 3, 9, 6, 30)]),
        ("America/New_York", "01:30", utcSeconds(2026, 10, 31, 17, 0), [utcSeconds(2026, 11, 1, 5, 30), utcSeconds(2026, 11, 2, 6, 30)]),
        // Sydney: clocks go forward at 02:00 on 2026-10-04 and back at 03:00 on 2026-04-05.
        ("Australia/Sydney", "02:30", utcSeconds(2026, 10, 3, 2, 0), [utcSeconds(2026, 10, 3, 16, 30), utcSeconds(2026, 10, 4, 15, 30)]),
        ("Australia/Sydney", "02:30", utcSeconds(2026, 4, 4, 2, 0), [utcSeconds(2026, 4, 4, 15, 30), utcSeconds(2026, 4, 5, 16, 30)]),
    ])
    func aRuleInASkippedOrRepeatedHourFiresExactlyOncePerDay(zoneName: String, at: String, from: Int64, expected: [Int64]) {
        let rules = #"[{"at":"\#(at)","action":"play","fadeSeconds":0}]"#
        #expect(fireTimes(zoneName: zoneName, rules: rules, from: from, hours: 48) == expected)
    }

    @Test func weekdaysAreLocalDays() {
        // 2026-12-07 is a Monday; a Monday 07:00 rule in New York fires at 12:00Z, not on Sunday's UTC evening.
        let rules = #"[{"at":"07:00","days":["mon"],"action":"play","fadeSeconds":0}]"#
        #expect(fireTimes(zoneName: "America/New_York", rules: rules, from: utcSeconds(2026, 12, 5, 0, 0), hours: 24 * 7)
                == [utcSeconds(2026, 12, 7, 12, 0)])
    }

    @Test func theClockSteppingFrom1970ToNowAtBootFiresOnlyWhatIsWithinTheCatchUpWindow() {
        let now = utcSeconds(2026, 12, 2, 6, 5)  // 07:05 in Berlin
        // Rule 0 was due 5 minutes before the sync, rule 1 20 minutes before, rule 2 is due in 10 minutes.
        let rules = #"[{"at":"07:00","action":"play","fadeSeconds":0},{"at":"06:45","action":"stop","fadeSeconds":0},{"at":"07:15","action":"stop","fadeSeconds":0}]"#
        var s = ScheduleHarness(clock: TestWallClock(seconds: 12, synced: false), rules: rules)
        let boot = s.start()
        #expect(boot.firedRules.isEmpty)
        #expect(s.state.schedule.trusted == false)
        #expect(boot.lastPublished("schedules")?["next"] == .null, "no next time is claimed on an untrusted clock")
        #expect(boot.lastPublished("schedules")?["clockSynced"] == .bool(false))
        // Unsynced, the core has nothing to wait for: no deadline of its own
        // (the runtime's watch reports the sync), and two minutes fire nothing.
        #expect(s.state.schedule.deadline == nil)
        #expect(s.pass(seconds: 120).firedRules.isEmpty)
        let synced = s.step(to: now)
        #expect(synced.firedRules == [0], "the 07:00 rule fires once at the sync; the 06:45 one is too old")
        #expect(synced.audioRequests.contains { if case .play = $0 { return true } else { return false } })
        #expect(synced.lastPublished("schedules")?["next"] == .object([("rule", .number(2)), ("at", .string("2026-12-02T06:15:00.000Z"))]))
        // The same step reported again, and time passing: nothing fires twice.
        #expect(s.step(to: now).firedRules.isEmpty)
        #expect(s.pass(seconds: 9 * 60).firedRules.isEmpty)
        #expect(s.pass(seconds: 60).firedRules == [2])
    }

    @Test func aStepOnAnUnsynchronisedClockIsFollowedByAQuickLookForTheSync() {
        // Setting the clock clears the kernel's sync flag; NTP sets it again just after.
        let now = utcSeconds(2026, 12, 2, 5, 59)  // 06:59 Berlin
        var s = ScheduleHarness(clock: TestWallClock(seconds: 12, synced: false), rules: #"[{"at":"07:00","action":"play","fadeSeconds":0}]"#)
        s.start()
        s.pass(seconds: 10)
        #expect(s.step(to: now, synced: false).firedRules.isEmpty)
        #expect(s.state.schedule.deadline == s.h.now.advanced(byMilliseconds: 2000))
        s.clock.synced = true
        s.pass(seconds: 2)
        #expect(s.state.schedule.next?.at == utcSeconds(2026, 12, 2, 6, 0))
        #expect(s.pass(seconds: 60).firedRules == [0])
    }

    @Test func aSyncWithoutAStepIsTakenWhenReportedAndPublished() {
        // NTP slews a nearly right clock into sync: no step, only the flag changes.
        let now = utcSeconds(2026, 12, 2, 6, 3)  // 07:03 Berlin: the 07:00 rule passed 3 minutes ago
        var s = ScheduleHarness(clock: TestWallClock(seconds: now, synced: false),
                                rules: #"[{"at":"07:00","action":"play","fadeSeconds":0},{"at":"07:30","action":"stop","fadeSeconds":0}]"#)
        s.start()
        #expect(s.pass(seconds: 60).firedRules.isEmpty)
        s.clock.synced = true
        #expect(s.pass(seconds: 60).firedRules.isEmpty, "the core does not poll the flag")
        let synced = s.syncChanges(to: true)
        #expect(synced.firedRules == [0], "07:00, five minutes back, fires once when the sync is reported")
        #expect(synced.lastPublished("schedules")?["clockSynced"] == .bool(true))
        #expect(s.state.schedule.deadline != nil)
        // Reported again (a redundant report): nothing fires twice.
        #expect(s.syncChanges(to: true).firedRules.isEmpty)
        // Sync lost: no rule fires, and `schedules` says so; the next does not fire until synced again.
        let lost = s.syncChanges(to: false)
        #expect(lost.lastPublished("schedules")?["clockSynced"] == .bool(false))
        #expect(lost.lastPublished("schedules")?["next"] == .null)
        #expect(s.state.schedule.deadline == nil)
        #expect(s.pass(seconds: 30 * 60).firedRules.isEmpty, "07:30 passes unsynced")
    }

    @Test func aRuleWhoseTimePassedDuringAForwardStepFiresOnceWithinTheWindowElseNot() {
        let start = utcSeconds(2026, 12, 2, 5, 0)  // 06:00 Berlin
        let rules = #"[{"at":"06:30","action":"play","fadeSeconds":0},{"at":"08:00","action":"play","fadeSeconds":0}]"#
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: rules)
        s.start()
        #expect(s.step(to: start + 35 * 60).firedRules == [0], "06:30 passed 5 minutes ago")
        #expect(s.step(to: start + 4 * 3600).firedRules.isEmpty, "08:00 passed 2 hours ago: too old")
    }

    @Test func aStepBackFiresNothingTwice() {
        let start = utcSeconds(2026, 12, 2, 5, 59)  // 06:59 Berlin
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: #"[{"at":"07:00","action":"play","fadeSeconds":0}]"#)
        s.start()
        #expect(s.pass(seconds: 120).firedRules == [0])
        #expect(s.step(to: start - 3600).firedRules.isEmpty)
        #expect(s.pass(seconds: 2 * 3600).firedRules.isEmpty, "the clock passes 07:00 again: already fired")
        #expect(s.pass(seconds: 24 * 3600).firedRules == [0], "the next day's fires")
    }

    @Test func aRestartFiresNothingThatAlreadyFiredButCatchesUpWhatItMissed() {
        let start = utcSeconds(2026, 12, 2, 5, 59)
        let rules = #"[{"at":"07:00","action":"play","fadeSeconds":0},{"at":"07:03","action":"stop","fadeSeconds":0}]"#
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: rules)
        s.start()
        #expect(s.pass(seconds: 90).firedRules == [0])
        let saved = s.h.speaker.persistedSnapshot
        #expect(saved.schedule.firedThrough == s.state.schedule.firedThrough)
        // Off for 5 minutes (07:00:30 → 07:05:30): the 07:00 rule fired, the 07:03 one was missed.
        let clock = TestWallClock(seconds: s.clock.seconds + 300)
        var restarted = ScheduleHarness(clock: clock, rules: rules, restored: PersistedState.decodeOrNil(saved.fileBytes))
        #expect(restarted.start().firedRules == [1])
    }

    /// A power cut right after a rule fired must not fire it again: the
    /// tick that fires it writes the state file at once, without the
    /// half-second settle that batches a knob's detents.
    @Test func theTickThatFiresARuleWritesTheStateAtOnce() throws {
        let start = utcSeconds(2026, 12, 2, 5, 59)
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: #"[{"at":"07:00","action":"play","fadeSeconds":0}]"#)
        s.start()
        s.pass(seconds: 5)  // the start's own write is done and its interval is over
        var firing: [SpeakerEffect] = []
        for _ in 0..<1000 where firing.firedRules.isEmpty {
            let due = try #require(s.h.speaker.nextDeadline)
            s.clock.advance(ms: Int64(due.nanoseconds(since: s.h.now) / 1_000_000))
            s.h.now = due
            firing = s.h.send(.tick(due))
            _ = s.h.engineDoes(firing)
        }
        #expect(firing.firedRules == [0])
        let written = firing.compactMap { if case .saveState(let st) = $0 { return st } else { return nil } }
        #expect(written.last?.schedule.firedThrough == s.state.schedule.firedThrough, "\(firing)")
        #expect(written.last?.schedule.firedThrough != nil)
    }

    @Test func noRuleFiresWhileUnsyncedUnlessRequireSyncIsOff() {
        let start = utcSeconds(2026, 12, 2, 5, 59)
        var strict = ScheduleHarness(clock: TestWallClock(seconds: start, synced: false), rules: #"[{"at":"07:00","action":"play","fadeSeconds":0}]"#)
        strict.start()
        #expect(strict.pass(seconds: 600).firedRules.isEmpty)
        var rtc = ScheduleHarness(clock: TestWallClock(seconds: start, synced: false), rules: #"[{"at":"07:00","action":"play","fadeSeconds":0}]"#) {
            $0.clock.requireSync = false
        }
        rtc.start()
        #expect(rtc.pass(seconds: 600).firedRules == [0])
    }

    @Test func aPlayRuleFadesInOnTheLongFadeStageAndAStopRuleFadesOutThenEnds() {
        let start = utcSeconds(2026, 12, 2, 5, 59)
        let rules = #"[{"at":"07:00","action":"play","soundID":"pink","level":0.3,"fadeSeconds":600},{"at":"08:00","action":"stop","fadeSeconds":120}]"#
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: rules)
        s.start()
        let wake = s.pass(seconds: 120)
        let requests = wake.audioRequests.filter { if case .setLevel = $0 { return false } else { return true } }
        guard requests.count == 3, case .longFade(0, 0, _) = requests[0], case .play("pink", _, _) = requests[1],
              case .longFade(1, 600_000, _) = requests[2] else {
            Issue.record("expected longFade(0, 0), play(pink), longFade(1, 600 s), got \(requests)")
            return
        }
        #expect(wake.levels.last == 0.3)
        #expect(s.state.transport.session.intendsPlayback)
        let bedtime = s.pass(seconds: 3600)
        guard case .longFade(0, 120_000, let ticket)? = bedtime.audioRequests.last else {
            Issue.record("expected a 120 s fade-out, got \(bedtime.audioRequests)")
            return
        }
        #expect(s.state.transport.session.intendsPlayback, "still playing during the fade-out")
        let end = s.h.send(.engine(.longFadeDone(ticket: ticket), at: s.h.now))
        guard case .pause(0, _)? = end.audioRequests.first, case .longFade(1, 0, _)? = end.audioRequests.last else {
            Issue.record("expected pause(0) then longFade(1, 0), got \(end.audioRequests)")
            return
        }
        #expect(!s.state.transport.session.isActive, "the session ended")
    }

    @Test func aListenersCommandDuringAStopFadeCancelsIt() {
        let start = utcSeconds(2026, 12, 2, 5, 59)
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: #"[{"at":"07:00","action":"stop","fadeSeconds":300}]"#)
        s.start()
        s.h.commandDone(#"{"id":"p","action":"play"}"#)
        guard case .longFade(0, 300_000, let ticket)? = s.pass(seconds: 120).audioRequests.last else {
            Issue.record("no fade-out")
            return
        }
        let up = s.h.command(#"{"id":"v","action":"volumeUp"}"#)
        #expect(up.audioRequests.contains { if case .longFade(1, 1000, _) = $0 { return true } else { return false } })
        #expect(s.h.send(.engine(.longFadeDone(ticket: ticket), at: s.h.now)).audioRequests.isEmpty, "the cancelled fade ends nothing")
        #expect(s.state.transport.session.intendsPlayback)
    }
}

extension ScheduleTests {
    /// One multiplier, two fades: a sleep timer whose fade would start
    /// during a `stop` rule's fade-out leaves the rule's fade alone (it is
    /// heading to silence already), so the rule's fade finishes on time and
    /// ends the session.
    @Test func aSleepTimerFadeDoesNotReplaceAStopRulesFadeOut() {
        let start = utcSeconds(2026, 12, 2, 5, 59)  // 06:59 in the harness's zone
        var s = ScheduleHarness(clock: TestWallClock(seconds: start), rules: #"[{"at":"07:00","action":"stop","fadeSeconds":600}]"#)
        s.start()
        s.h.commandDone(#"{"id":"p","action":"play"}"#)
        s.pass(seconds: 30)
        _ = s.h.command(#"{"id":"t","action":"setSleepTimer","minutes":15,"fadeSeconds":600}"#)  // fade from 07:04:30
        let fadeOut = s.pass(seconds: 60).audioRequests
        guard case .longFade(0, 600_000, let ticket)? = fadeOut.last else {
            Issue.record("no fade-out: \(fadeOut)")
            return
        }
        let during = s.pass(seconds: 300)  // to 07:05:30
        #expect(during.audioRequests.allSatisfy { if case .longFade = $0 { return false } else { return true } }, "\(during.audioRequests)")
        let end = s.h.send(.engine(.longFadeDone(ticket: ticket), at: s.h.now))
        #expect(end.audioRequests.contains { if case .pause = $0 { return true } else { return false } }, "\(end.audioRequests)")
        #expect(!s.state.transport.session.isActive, "the rule ended the session")
    }
}

extension PersistedState {
    static func decodeOrNil(_ bytes: [UInt8]) -> PersistedState? { try? decode(bytes) }
}
