// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerSystem
import Board

/// The status LED's patterns on the manual-time loop, recorded by the
/// simulated board's ``StatusLedLines`` (the same driver drives the GPIO line).
@Suite struct StatusLedDriverTests {
    static func rig() -> (ManualEventLoop, SimulatedBoard, StatusLedDriver) {
        let loop = ManualEventLoop()
        let logger = Logger(component: "t", threshold: .debug, backend: MemoryLogBackend())
        let board = SimulatedBoard(loop: loop, logger: logger) { _ in }
        let driver = StatusLedDriver(loop: loop, lines: board) { error in Issue.record("\(error)") }
        return (loop, board, driver)
    }

    /// The recorded levels as (lit, ms since `t0`).
    static func trace(_ board: SimulatedBoard, from t0: UInt64) -> [(Bool, UInt64)] {
        board.ledLog.map { ($0.lit, ($0.at - t0) / 1_000_000) }
    }

    @Test func steadyPatternsSetTheLevelOnce() {
        let (loop, board, driver) = Self.rig()
        driver.show(.on)
        driver.show(.off)
        loop.advanceTime(byMilliseconds: 10_000)
        #expect(board.ledLog.map(\.lit) == [true, false])
    }

    @Test func breathingRepeatsSlowlyUntilReplaced() {
        let (loop, board, driver) = Self.rig()
        let t0 = loop.now()
        driver.show(.breathing)
        loop.advanceTime(byMilliseconds: 6_100)
        let t = Self.trace(board, from: t0)
        #expect(t.map(\.0) == [true, false, true, false, true])
        #expect(t.map(\.1) == [0, 1500, 3000, 4500, 6000])
        driver.show(.on)
        loop.advanceTime(byMilliseconds: 10_000)
        #expect(board.ledLog.count == 6, "the old schedule is gone")
    }

    @Test func blinksCountOnceThenEndDark() {
        let (loop, board, driver) = Self.rig()
        let t0 = loop.now()
        driver.show(.blinks(3))
        loop.advanceTime(byMilliseconds: 5_000)
        let t = Self.trace(board, from: t0)
        #expect(t.map(\.0) == [false, true, false, true, false, true, false, false])
        #expect(t.map(\.1) == [0, 400, 600, 900, 1100, 1400, 1600, 2400])
        #expect(t.filter(\.0).count == 3)
    }

    /// A confirmation that begins while the LED is lit starts dark, so its
    /// first blink stands apart from the light before it.
    @Test func aConfirmationAfterTheLightStartsDark() {
        let (loop, board, driver) = Self.rig()
        driver.show(.on)
        let t0 = loop.now()
        driver.show(.blinks(1))
        loop.advanceTime(byMilliseconds: 2_000)
        let t = Self.trace(board, from: t0)
        #expect(t.map(\.0) == [true, false, true, false, false])
        #expect(t.map(\.1) == [0, 0, 400, 600, 1400])
        let (loop2, board2, driver2) = Self.rig()
        let t1 = loop2.now()
        driver2.show(.breathing)
        driver2.show(.longBlink)
        loop2.advanceTime(byMilliseconds: 3_000)
        let long = Self.trace(board2, from: t1).suffix(4)
        #expect(long.map(\.0) == [false, true, false, false], "dark, 1.2 s lit, dark: \(long)")
        #expect(long.map(\.1) == [0, 400, 1600, 2100])
    }

    @Test func fastBlinkIsTenTimesASecond() {
        let (loop, board, driver) = Self.rig()
        driver.show(.fastBlink)
        loop.advanceTime(byMilliseconds: 950)
        #expect(board.ledLog.filter(\.lit).count == 5)
        driver.stop()
        #expect(board.ledLog.last?.lit == false)
    }
}
