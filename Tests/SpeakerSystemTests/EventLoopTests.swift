// SPDX-License-Identifier: Apache-2.0
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerSystem

/// Real timerfd/eventfd/signalfd tests. Every loop has a guard timer that
/// stops it, so a broken loop fails a test instead of hanging the suite.
@Suite struct EventLoopTests {
    private let ms: UInt64 = 1_000_000

    @Test func timersFireInDeadlineOrderWithCancelAndReentrantSchedule() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        var lateness: [Bool] = []
        let base = MonotonicClock.now()
        func record(_ name: String, _ deadline: UInt64) {
            fired.append(name)
            lateness.append(MonotonicClock.now() >= deadline)
        }
        loop.schedule(at: base + 30 * ms) { record("c", base + 30 * ms) }
        let doomed = loop.schedule(at: base + 20 * ms) { record("cancelled", base + 20 * ms) }
        loop.schedule(at: base + 10 * ms) {
            record("a", base + 10 * ms)
            loop.cancel(doomed)
            loop.schedule(at: base + 25 * ms) { record("rescheduled", base + 25 * ms) }
        }
        loop.schedule(at: base + 20 * ms) { record("b", base + 20 * ms) }
        loop.schedule(at: base + 40 * ms) { loop.stop() }
        loop.schedule(after: 30_000) { fired.append("guard"); loop.stop() }
        try loop.run()
        #expect(fired == ["a", "b", "rescheduled", "c"])
        #expect(lateness.allSatisfy { $0 }, "no timer may fire before its deadline")
        #expect(MonotonicClock.now() - base >= 40 * ms)
    }

    @Test func lateLoopStillFiresInDeadlineOrderIncludingReentrantPastTimers() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let base = MonotonicClock.now()
        // All deadlines have passed before run() starts, as on a loaded machine.
        loop.schedule(at: base - 30 * ms) {
            fired.append("a")
            loop.schedule(at: base - 25 * ms) { fired.append("scheduled-by-a") }
        }
        loop.schedule(at: base - 20 * ms) { fired.append("b") }
        loop.schedule(at: base - 10 * ms) { fired.append("c") }
        loop.schedule(after: 1) { loop.stop() }
        try loop.run()
        #expect(fired == ["a", "scheduled-by-a", "b", "c"])
    }

    @Test func pastDeadlinesFireAndEqualDeadlinesKeepOrder() throws {
        let loop = try EventLoop()
        var fired: [Int] = []
        let past = MonotonicClock.now() - 5 * ms
        for i in 0..<5 { loop.schedule(at: past) { fired.append(i) } }
        loop.schedule(at: 0) { fired.insert(-1, at: 0) }  // deadline 0 must still fire
        loop.schedule(after: 1) { loop.stop() }
        loop.schedule(after: 30_000) { fired.append(99); loop.stop() }
        try loop.run()
        #expect(fired == [-1, 0, 1, 2, 3, 4])
    }

    /// The timerfd is re-armed only for an earlier deadline: a timer moved
    /// later between two turns (cancelled, a later one scheduled) leaves the
    /// earlier one armed, whose wake-up fires nothing and re-arms.
    @Test func aTimerMovedLaterFiresAtItsNewDeadlineNotBefore() throws {
        let loop = try EventLoop()
        let waker = try EventFD()
        var fired: [String] = []
        let base = MonotonicClock.now()
        let moved = loop.schedule(at: base + 10 * ms) { fired.append("moved away") }
        loop.addReader(fd: waker.fd) {
            _ = waker.drain()
            // The first turn armed +10 ms; now the earliest timer is +30 ms.
            loop.cancel(moved)
            loop.schedule(at: base + 30 * ms) {
                fired.append(MonotonicClock.now() >= base + 30 * ms ? "late" : "early")
                loop.stop()
            }
        }
        waker.signal()
        loop.schedule(after: 30_000) { fired.append("guard"); loop.stop() }
        try loop.run()
        #expect(fired == ["late"])
    }

    @Test func readerFiresWhenAnotherThreadSignalsTheEventFD() throws {
        let loop = try EventLoop()
        let waker = try EventFD()
        var drained: [UInt64] = []
        let registration = loop.addReader(fd: waker.fd) {
            drained.append(waker.drain())
            if drained.reduce(0, +) >= 3 { loop.stop() }
        }
        // A real thread, not a Task: blocking tests may hold every thread of the cooperative pool.
        let signaller = Thread { waker.signal(); waker.signal(); waker.signal() }
        signaller.start()
        loop.schedule(after: 30_000) { drained.append(999); loop.stop() }
        try loop.run()
        #expect(drained.reduce(0, +) == 3)
        #expect(!drained.contains(999))
        #expect(waker.drain() == 0)

        // After remove, the handler no longer runs.
        loop.remove(registration)
        waker.signal()
        var extra = 0
        loop.schedule(after: 20) { loop.stop() }
        loop.addReader(fd: -1) { extra += 1 }  // fd -1 is ignored by poll
        try loop.run()
        #expect(drained.count <= 3 && extra == 0)
    }

    @Test func signalSentToSelfArrivesThroughSignalFD() throws {
        let loop = try EventLoop()
        var received: [Int32] = []
        try loop.onSignal([SIGUSR1, SIGHUP]) { signal in
            received.append(signal)
            // The second only once the first arrived: two pending signals are
            // read lowest number first, so timers 5 ms apart raced on a busy machine.
            if signal == SIGUSR1 { raise(SIGHUP) }
            if received.count == 2 { loop.stop() }
        }
        // raise() targets this thread, where onSignal blocked them.
        loop.schedule(after: 5) { raise(SIGUSR1) }
        loop.schedule(after: 30_000) { received.append(-1); loop.stop() }
        try loop.run()
        #expect(received == [SIGUSR1, SIGHUP])
    }

    @Test func stopFromHandlerSkipsTheRestAndRunResumes() throws {
        let loop = try EventLoop()
        var fired: [String] = []
        let deadline = MonotonicClock.now() + 2 * ms
        loop.schedule(at: deadline) { fired.append("first"); loop.stop() }
        loop.schedule(at: deadline) { fired.append("second") }
        try loop.run()
        #expect(fired == ["first"])
        loop.schedule(after: 0) {
            #expect(throws: SystemError(operation: "EventLoop.run (already running)", errno: EBUSY)) { try loop.run() }
        }
        #expect(loop.nextDeadline == deadline)
        loop.schedule(after: 1) { loop.stop() }
        try loop.run()
        #expect(fired == ["first", "second"])
        #expect(!loop.isRunning)
    }

    @Test func clocksAndRandom() throws {
        let a = MonotonicClock.now(), b = MonotonicClock.now()
        #expect(b >= a)
        #expect(WallClock.now().seconds > 1_600_000_000)
        let r1 = try systemRandomBytes(32), r2 = randomBytes(32)
        #expect(r1.count == 32 && r2.count == 32 && r1 != r2)
    }

    @Test func systemErrorNamesOperationErrnoAndPath() {
        let error = SystemError(operation: "open", errno: ENOENT, path: "/nope")
        #expect(error.description == "open(/nope): No such file or directory (errno 2)")
        #expect(throws: SystemError(operation: "close", errno: EBADF)) {
            _ = try systemCall("close") { close(-1) }
        }
    }
}
