// SPDX-License-Identifier: Apache-2.0
import Synchronization
import Testing
import SpeakerCore
import SpeakerPorts
@testable import SpeakerRuntime

/// A wall clock a runtime test sets.
final class WallClockBox: Sendable {
    private let value: Mutex<Int64>
    init(seconds: Int64) { value = Mutex(seconds) }
    var seconds: Int64 {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}

/// The kernel's sync flag as a runtime test sets it.
final class SyncFlagBox: Sendable {
    private let flag: Mutex<Bool>
    init(_ value: Bool) { flag = Mutex(value) }
    var value: Bool {
        get { flag.withLock { $0 } }
        set { flag.withLock { $0 = newValue } }
    }
}

/// The step descriptor's in-memory twin: readable when a test says so.
final class InMemoryClockSteps: WallClockSteps {
    let fd: Int32 = 991
    var stepped = false
    func takeStep() -> Bool {
        defer { stepped = false }
        return stepped
    }
}

/// The clock seam on the manual-time loop: a wall-clock step reaches the core
/// as `.clockStepped` and re-derives the schedule's deadline from the new time.
@Suite struct ClockStepTests {
    @Test func aStepIsNoticedAndTheRuleFiresAtTheNewTime() throws {
        // 2026-11-29T12:00Z; the rule is at 12:30 UTC.
        let h = try RuntimeHarness {
            $0.schedules = [ScheduleRule(minuteOfDay: 12 * 60 + 30, action: .play, fadeSeconds: 0)]
        }
        try h.runtime.start()
        h.loop.advanceTime(byMilliseconds: 1000)
        let next = h.state.schedule.next
        #expect(next?.at == Int64(1_795_953_600 + 1800), "\(String(describing: next))")
        let deadline = h.state.schedule.deadline
        // The clock is set 29 minutes forward: the rule is now a minute away, not 30.
        h.stepClock(to: 1_795_953_600 + 29 * 60)
        #expect(h.logs.entries.contains { $0.message.contains("the wall clock was set") })
        let after = try #require(h.state.schedule.deadline)
        #expect(after < deadline!)
        #expect(!h.state.transport.session.intendsPlayback)
        h.wall.seconds += 60
        h.loop.advanceTime(byMilliseconds: 60_000)
        #expect(h.state.transport.session.intendsPlayback, "the 12:30 rule fired a minute after the step")
        // A readiness that is not a step (the timer's own expiry) is no step.
        let reductions = h.runtime.reductions
        h.loop.readable(fd: h.clockSteps.fd)
        #expect(h.runtime.reductions == reductions)
    }

    /// An unsynchronised, idle speaker is not woken by its schedule: only the
    /// watch reads the flag, and the core runs when the flag changes.
    @Test func aSyncIsNoticedByTheWatchAndAnIdleSpeakerIsNotWokenMeanwhile() throws {
        // 2026-11-29T12:00Z; the rule is at 12:02 UTC.
        let h = try RuntimeHarness {
            $0.schedules = [ScheduleRule(minuteOfDay: 12 * 60 + 2, action: .play, fadeSeconds: 0)]
        }
        h.synced.value = false
        try h.runtime.start()
        h.loop.advanceTime(byMilliseconds: 1000)
        #expect(h.state.schedule.deadline == nil && !h.state.schedule.synced)
        let reductions = h.runtime.reductions
        h.wall.seconds += 600
        h.loop.advanceTime(byMilliseconds: 600_000)
        #expect(h.runtime.reductions == reductions, "ten unsynchronised minutes: the core never ran")
        #expect(!h.state.transport.session.intendsPlayback)
        // NTP slews into sync: within one interval the rule (8 minutes back, inside the catch-up window) fires.
        h.synced.value = true
        h.wall.seconds += Int64(ClockSyncWatch.intervalMs / 1000)
        h.loop.advanceTime(byMilliseconds: Int(ClockSyncWatch.intervalMs))
        #expect(h.runtime.reductions == reductions + 1)
        #expect(h.state.schedule.synced && h.state.schedule.trusted)
        #expect(h.state.transport.session.intendsPlayback, "the 12:02 rule fired at the sync")
        #expect(h.logs.entries.contains { $0.message.contains("wall clock synchronised") })
    }
}
