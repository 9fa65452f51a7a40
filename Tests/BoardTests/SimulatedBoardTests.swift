// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerCore
import SpeakerSystem
import Board

/// The simulated board on the manual-time loop: edges come from its timers and
/// carry their scheduled monotonic timestamps, exactly.
@Suite struct SimulatedBoardTests {
    private let ms: UInt64 = 1_000_000

    /// A board on the manual-time loop whose edges are collected; `run`
    /// advances virtual time until `count` edges arrived (at most 3 s of it).
    private final class Harness {
        let loop = ManualEventLoop()
        let log = MemoryLogBackend()
        var board: SimulatedBoard!
        var edges: [LineEdge] = []
        var deliveredAt: [UInt64] = []

        init() throws {
            board = SimulatedBoard(loop: loop, logger: Logger(component: "board", threshold: .debug, backend: log)) {
                [unowned self] edge in
                self.edges.append(edge)
                self.deliveredAt.append(self.loop.now())
            }
        }

        func run(until count: Int) throws {
            let limit = loop.now() + 3_000_000_000
            while edges.count < count, loop.now() < limit { loop.advanceTime(byMilliseconds: 1) }
        }

        func runUntilIdle() throws {
            let limit = loop.now() + 3_000_000_000
            while board.isBusy, loop.now() < limit { loop.advanceTime(byMilliseconds: 1) }
        }

        /// (line, level) pairs, without timestamps.
        var levels: [String] { edges.map { "\($0.line.rawValue)=\($0.isActive ? 1 : 0)" } }
    }

    @Test func pressGivesDownThenUpFiftyMillisecondsApart() throws {
        let h = try Harness()
        let before = h.loop.now()
        #expect(h.board.handle(command: "press playPause") == "ok")
        try h.run(until: 2)
        #expect(h.levels == ["playPause=1", "playPause=0"])
        #expect(h.edges[0].at.nanoseconds == before, "the press starts now")
        #expect(h.edges[1].at.nanoseconds - h.edges[0].at.nanoseconds == 50 * ms)
        #expect(zip(h.deliveredAt, h.edges).allSatisfy { $0 >= $1.at.nanoseconds }, "never delivered early")
        #expect(h.deliveredAt == h.edges.map(\.at.nanoseconds), "delivered on time (manual clock)")
        #expect(h.board.levels[.playPause] == false)
        #expect(!h.board.isBusy)
    }

    @Test func holdDownAndUp() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "hold next 120") == "ok")
        try h.run(until: 2)
        #expect(h.edges[1].at.nanoseconds - h.edges[0].at.nanoseconds == 120 * ms)
        #expect(h.board.handle(command: "down encoderSwitch") == "ok")
        #expect(h.board.handle(command: "down encoderSwitch").hasPrefix("error: encoderSwitch is held down"))
        #expect(h.board.handle(command: "press encoderSwitch").hasPrefix("error: encoderSwitch is held down"))
        #expect(h.board.handle(command: "UP encoderswitch") == "ok")
        #expect(h.board.handle(command: "up encoderSwitch") == "error: encoderSwitch is not down")
        try h.run(until: 4)
        #expect(h.levels == ["next=1", "next=0", "encoderSwitch=1", "encoderSwitch=0"])
        #expect(h.edges[3].at.nanoseconds - h.edges[2].at.nanoseconds >= 50 * ms, "queued command waits the gap")
    }

    @Test func clockwiseTurnIsTwoFullQuadratureCyclesALeading() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "turn +2") == "ok")
        try h.run(until: 8)
        #expect(h.levels == [
            "encoderA=1", "encoderB=1", "encoderA=0", "encoderB=0",
            "encoderA=1", "encoderB=1", "encoderA=0", "encoderB=0",
        ])
        for (a, b) in zip(h.edges, h.edges.dropFirst()) { #expect(b.at.nanoseconds - a.at.nanoseconds == 3 * ms) }
        #expect(QuadratureCheck.detents(h.edges) == 2)
    }

    @Test func counterClockwiseTurnHasBLeading() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "turn -1") == "ok")
        try h.run(until: 4)
        #expect(h.levels == ["encoderB=1", "encoderA=1", "encoderB=0", "encoderA=0"])
        #expect(QuadratureCheck.detents(h.edges) == -1)
    }

    @Test func queuedCommandsDoNotInterleave() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "turn +1") == "ok")
        #expect(h.board.handle(command: "press next") == "ok")
        #expect(h.board.handle(command: "turn -1") == "ok")
        try h.run(until: 10)
        #expect(h.levels == [
            "encoderA=1", "encoderB=1", "encoderA=0", "encoderB=0",
            "next=1", "next=0",
            "encoderB=1", "encoderA=1", "encoderB=0", "encoderA=0",
        ])
        #expect(zip(h.edges, h.edges.dropFirst()).allSatisfy { $0.at < $1.at })
    }

    @Test func bounceAddsEdgesButEndsAtTheIntendedLevels() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "bounce on") == "ok")
        #expect(h.board.handle(command: "press previous") == "ok")
        #expect(h.board.handle(command: "turn +3") == "ok")
        #expect(h.board.handle(command: "turn -1") == "ok")
        let clean = 2 + 4 * 3 + 4
        // Run until the schedule is empty: the bounced edge count is not known up front.
        try h.runUntilIdle()
        #expect(h.edges.count > clean && h.edges.count <= clean * 5)
        #expect(!h.board.isBusy)

        // Per line, every edge changes the level (a real line never repeats one).
        for line in InputLine.allCases {
            let levels = h.edges.filter { $0.line == line }.map(\.isActive)
            #expect(zip(levels, levels.dropFirst()).allSatisfy { $0 != $1 }, "\(line)")
            #expect(levels.last != true, "\(line) ends inactive")
        }
        // A 1 ms settle window (what a debouncer does) recovers the clean press.
        let button = Self.settled(h.edges.filter { $0.line == .previous }, window: 1 * ms)
        #expect(button.map(\.isActive) == [true, false])
        // A transition-table decoder counts exactly the turned detents.
        #expect(QuadratureCheck.detents(h.edges.filter { !$0.line.isButton }) == 2)
        // Bursts are short.
        #expect(button.count == 2)
        #expect(h.board.handle(command: "bounce off") == "ok")
    }

    @Test func badCommandsSayWhatWasWrong() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "jump playPause") ==
            "error: unknown command \"jump\" (expected press, hold, down, up, turn, bounce, pulses or clock)")
        #expect(h.board.handle(command: "press volume") ==
            "error: unknown button \"volume\" (expected playPause, next, previous or encoderSwitch)")
        #expect(h.board.handle(command: "press encoderA").hasPrefix("error: unknown button \"encoderA\""))
        #expect(h.board.handle(command: "hold playPause abc") ==
            "error: bad number \"abc\" for hold: expected milliseconds 1–60000")
        #expect(h.board.handle(command: "hold playPause 0").hasPrefix("error: bad number \"0\""))
        #expect(h.board.handle(command: "turn x").hasPrefix("error: bad number \"x\" for turn"))
        #expect(h.board.handle(command: "turn 0").hasPrefix("error: bad number \"0\" for turn"))
        #expect(h.board.handle(command: "turn +1000").hasPrefix("error: bad number \"+1000\" for turn"))
        #expect(h.board.handle(command: "bounce maybe") == "error: bounce expects on or off, got \"maybe\"")
        #expect(h.board.handle(command: "press").hasPrefix("error: press takes one argument, got 0"))
        #expect(h.board.handle(command: "pulses now").hasPrefix("error: pulses takes 0 arguments, got 1"))
        #expect(h.board.handle(command: "   ").hasPrefix("error: empty command"))
        #expect(h.board.handle(command: "clock +60") == "error: this speaker has no simulated clock")
        #expect(h.board.handle(command: "clock 60").hasPrefix("error: bad clock arguments"), "a step says its sign")
        #expect(h.board.handle(command: "clock +999999999999").hasPrefix("error: bad clock arguments"))
        #expect(h.board.handle(command: "clock synced maybe") == "error: clock synced expects on, off or host, got \"maybe\"")
        #expect(!h.board.isBusy, "refused commands schedule nothing")
    }

    /// `clock` moves the simulated wall clock and its sync flag, and each
    /// change makes the clock's descriptor readable (the clock service's step).
    @Test func clockCommandsStepTheSimulatedWallClock() throws {
        let clock = try SimulatedWallClock()
        let loop = ManualEventLoop()
        let board = SimulatedBoard(loop: loop, logger: Logger(component: "t", threshold: .debug, backend: MemoryLogBackend()),
                                   clock: clock, onEdge: { _ in })
        let before = WallClock.now().seconds
        #expect(board.handle(command: "clock +86400") == "ok offset=86400")
        #expect(board.handle(command: "clock -3600") == "ok offset=82800")
        #expect(clock.takeStep(), "a step was reported")
        #expect(!clock.takeStep(), "once")
        #expect(clock.now().seconds - before >= 82800 && clock.now().seconds - before <= 82800 + 60)
        #expect(board.handle(command: "clock synced on") == "ok")
        #expect(clock.synced(host: false))
        #expect(board.handle(command: "clock synced off") == "ok")
        #expect(!clock.synced(host: true))
        #expect(board.handle(command: "clock synced host") == "ok")
        #expect(clock.synced(host: true) && !clock.synced(host: false))
    }

    @Test func pulsesAreCounted() throws {
        let h = try Harness()
        #expect(h.board.handle(command: "pulses") == "up=0 down=0")
        h.board.recordPulse(up: true)
        h.board.recordPulse(up: true)
        h.board.recordPulse(up: false)
        #expect(h.board.handle(command: "pulses") == "up=2 down=1")
        #expect(h.board.pulseCounts == (2, 1))
    }

    /// A flood of `turn +100` is refused once 4,096 edges wait, so the
    /// simulated board's queue stays bounded.
    @Test func aFloodOfTurnsIsBoundedAndSaysBusy() throws {
        let h = try Harness()
        var accepted = 0
        var busy: [String] = []
        for _ in 0..<3000 {
            let reply = h.board.handle(command: "turn +100")
            if reply == "ok" { accepted += 1 } else { busy.append(reply) }
        }
        #expect(accepted == 10, "10 × 400 edges fit under the 4,096 bound")
        #expect(busy.count == 2990)
        #expect(busy.first?.hasPrefix("error: busy: 4000 edges still queued and this command adds 400 (at most 4096)") == true,
                "\(busy.first ?? "")")
        #expect(h.board.handle(command: "press next") == "ok", "small commands still fit")
        #expect(h.board.handle(command: "pulses") == "up=0 down=0", "queries are never busy")
    }

    @Test func thePulseLogKeepsOnlyTheNewestPulses() throws {
        let h = try Harness()
        for i in 0..<10_000 {
            try h.board.drive(up: i % 2 == 0, active: true, at: UInt64(i) * 10)
            try h.board.drive(up: i % 2 == 0, active: false, at: UInt64(i) * 10 + 5)
        }
        #expect(h.board.pulseLog.count <= SimulatedBoard.pulseLogLimit + SimulatedBoard.pulseLogLimit / 4)
        #expect(h.board.pulseLog.last?.start == 99_990)
        #expect(h.board.pulseCounts == (5000, 5000), "the counts stay exact")
    }

    @Test func keyboardMap() {
        #expect(DemoKeyboard.action(for: .space) == .boardCommand("press playPause"))
        #expect(DemoKeyboard.action(for: .character("n")) == .boardCommand("press next"))
        #expect(DemoKeyboard.action(for: .character("p")) == .boardCommand("press previous"))
        #expect(DemoKeyboard.action(for: .right) == .boardCommand("turn +1"))
        #expect(DemoKeyboard.action(for: .left) == .boardCommand("turn -1"))
        #expect(DemoKeyboard.action(for: .character("q")) == .quit)
        #expect(DemoKeyboard.action(for: .character("z")) == nil)
    }

    /// Keeps only edges after which the line stayed put for `window`.
    static func settled(_ edges: [LineEdge], window: UInt64) -> [LineEdge] {
        edges.indices.filter { i in
            i == edges.count - 1 || edges[i + 1].at.nanoseconds - edges[i].at.nanoseconds >= window
        }.map { edges[$0] }
    }
}

/// A minimal transition-table quadrature decoder (the test's own, not the
/// core's): ±1 per valid Gray-code step, invalid jumps ignored; a detent is
/// counted when the phases return to rest after a net ±4.
enum QuadratureCheck {
    static func detents(_ edges: [LineEdge]) -> Int {
        var a = false, b = false, steps = 0, detents = 0
        for edge in edges {
            let old = (a ? 2 : 0) | (b ? 1 : 0)
            if edge.line == .encoderA { a = edge.isActive } else if edge.line == .encoderB { b = edge.isActive } else { continue }
            let new = (a ? 2 : 0) | (b ? 1 : 0)
            // Clockwise order 00 → 10 → 11 → 01 → 00 (A leads).
            let order = [0b00, 0b10, 0b11, 0b01]
            let from = order.firstIndex(of: old)!, to = order.firstIndex(of: new)!
            switch (to - from + 4) % 4 {
            case 1: steps += 1
            case 3: steps -= 1
            default: break
            }
            if new == 0 {
                if steps >= 4 { detents += 1 } else if steps <= -4 { detents -= 1 }
                steps = 0
            }
        }
        return detents
    }
}
