import Testing
import SpeakerCore
import SpeakerSystem
import Board

/// The amp pulse queue (pure) and its schedule on a real EventLoop, recorded
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

    /// Runs `loop` until `done` or a guard timeout (generous: CI may be loaded).
    private func run(_ loop: EventLoop, seconds: Int = 5, until done: @escaping () -> Bool) throws {
        var check: EventLoop.TimerID?
        func arm() { check = loop.schedule(after: 2) { if done() { loop.stop() } else { arm() } } }
        arm()
        let guardTimer = loop.schedule(after: seconds * 1000) { loop.stop() }
        try loop.run()
        loop.cancel(guardTimer)
        if let check { loop.cancel(check) }
    }

    @Test func pulsesHaveTheConfiguredWidthAndGap() throws {
        let loop = try EventLoop()
        let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())
        let board = SimulatedBoard(loop: loop, logger: logger) { _ in }
        let stepper = AmpStepper(loop: loop, lines: board, pulseMilliseconds: 15, gapMilliseconds: 10, maxPending: 20,
                                 logger: logger) { error in Issue.record("\(error)") }
        stepper.enqueue(.up(count: 2))
        stepper.enqueue(.down(count: 5))  // coalesces with the pending UP: net -4 after the first UP started
        try run(loop) { !stepper.isBusy }
        let log = board.pulseLog
        #expect(log.map(\.up) == [true, false, false, false, false], "first UP was in flight; 1 UP + 5 DOWN coalesced to 4 DOWN")
        #expect(board.handle(command: "pulses") == "up=1 down=4")
        for p in log {
            #expect(p.end - p.start >= 15_000_000, "never shorter than pulseMs")
            #expect(p.end - p.start < 65_000_000, "pulseMs plus at most scheduling slack (generous: CI may be loaded)")
        }
        for (a, b) in zip(log, log.dropFirst()) {
            #expect(b.start >= a.end + 10_000_000, "at least gapMs between pulses")
        }
    }

    @Test func aFastKnobIsBoundedByMaxPending() throws {
        let loop = try EventLoop()
        let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())
        let board = SimulatedBoard(loop: loop, logger: logger) { _ in }
        let stepper = AmpStepper(loop: loop, lines: board, pulseMilliseconds: 1, gapMilliseconds: 1, maxPending: 3,
                                 logger: logger) { error in Issue.record("\(error)") }
        for _ in 0..<10 { stepper.enqueue(.up(count: 1)) }
        #expect(stepper.pending == 3)
        #expect(stepper.dropped == 6, "one in flight, three pending, six dropped")
        try run(loop) { !stepper.isBusy }
        #expect(board.pulseCounts == (4, 0))
    }
}
