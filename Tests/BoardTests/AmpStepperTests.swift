// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerSystem
import Board

/// The amp pulse queue (pure) and its schedule on the manual-time loop, recorded
/// by the simulated board's ``AmpStepLines`` (the same stepper drives GPIO).
@Suite struct AmpStepperTests {
    @Test func queueCoalescesOppositePulses() {
        var q = AmpStepQueue(maxPending: 5)
        q.add(.up(count: 3))
        q.add(.down(count: 2))
        #expect(q.pending == 1)
        #expect(q.take() == true)
        #expect(q.take() == nil)
        q.add(.down(count: 2))
        #expect(q.take() == false)
        #expect(q.pending == -1)
    }

    @Test func queueIsBounded() {
        var q = AmpStepQueue(maxPending: 4)
        #expect(q.add(.up(count: 3)) == 0)
        #expect(q.add(.up(count: 3)) == 2, "two beyond the bound are dropped")
        #expect(q.pending == 4)
        #expect(q.add(.down(count: 10)) == 2, "net -6 is bounded at -4")
        #expect(q.pending == -4)
    }

    @Test func pulsesHaveTheConfiguredWidthAndGap() {
        let loop = ManualEventLoop()
        let t0 = loop.now()
        let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())
        let board = SimulatedBoard(loop: loop, logger: logger) { _ in }
        let stepper = AmpStepper(loop: loop, lines: board, pulseMilliseconds: 15, gapMilliseconds: 10, maxPending: 20,
                                 logger: logger) { error in Issue.record("\(error)") }
        stepper.enqueue(.up(count: 2))
        stepper.enqueue(.down(count: 5))  // coalesces with the pending UP: net -4 after the first UP started
        #expect(stepper.isBusy)
        loop.advanceTime(byMilliseconds: 14)
        #expect(board.pulseLog.isEmpty, "the first pulse is still active at 14 ms")
        loop.advanceTime(byMilliseconds: 1000)
        #expect(!stepper.isBusy)
        let ms: UInt64 = 1_000_000
        let log = board.pulseLog
        #expect(log.map(\.up) == [true, false, false, false, false], "first UP was in flight; 1 UP + 5 DOWN coalesced to 4 DOWN")
        #expect(board.handle(command: "pulses") == "up=1 down=4")
        // Exactly pulseMs active, exactly gapMs between: starts at 0, 25, 50, 75, 100 ms.
        #expect(log.map { ($0.start - t0) / ms } == [0, 25, 50, 75, 100])
        #expect(log.map { ($0.end - $0.start) / ms } == [15, 15, 15, 15, 15])
        #expect(loop.pendingTimers == 0, "idle: no timer left")
    }

    @Test func aFastKnobIsBoundedByMaxPending() {
        let loop = ManualEventLoop()
        let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())
        let board = SimulatedBoard(loop: loop, logger: logger) { _ in }
        let stepper = AmpStepper(loop: loop, lines: board, pulseMilliseconds: 1, gapMilliseconds: 1, maxPending: 3,
                                 logger: logger) { error in Issue.record("\(error)") }
        for _ in 0..<10 { stepper.enqueue(.up(count: 1)) }
        #expect(stepper.pending == 3)
        #expect(stepper.dropped == 6, "one in flight, three pending, six dropped")
        loop.advanceTime(byMilliseconds: 6)
        #expect(board.pulseCounts == (3, 0), "three done after 6 ms (pulses at 0–1, 2–3, 4–5; the fourth ends at 7)")
        loop.advanceTime(byMilliseconds: 100)
        #expect(board.pulseCounts == (4, 0))
        #expect(!stepper.isBusy)
    }

    @Test func stopCancelsTheScheduleAndLeavesBothLinesInactive() {
        let loop = ManualEventLoop()
        let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())
        let board = SimulatedBoard(loop: loop, logger: logger) { _ in }
        let stepper = AmpStepper(loop: loop, lines: board, pulseMilliseconds: 20, gapMilliseconds: 20, maxPending: 5,
                                 logger: logger) { error in Issue.record("\(error)") }
        stepper.enqueue(.down(count: 3))
        loop.advanceTime(byMilliseconds: 5)
        stepper.stop()
        #expect(!stepper.isBusy)
        #expect(stepper.pending == 0)
        #expect(loop.pendingTimers == 0)
        #expect(board.pulseCounts == (0, 1), "the pulse in flight ends at stop")
        loop.advanceTime(byMilliseconds: 500)
        #expect(board.pulseCounts == (0, 1), "nothing more after stop")
    }
}
