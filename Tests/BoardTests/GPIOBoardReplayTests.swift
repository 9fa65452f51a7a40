import Testing
import SpeakerCore
import SpeakerSystem
import Board

/// ``GPIOBoard`` itself — resync, the 3 ms reorder, release on the loop's
/// clock — replayed on the manual-time loop from traces of its libgpiod
/// accesses recorded in the HIL VM on gpio-sim (``BoardReplay``). Every
/// recorded call is made again, in order; the edges and the inputs they
/// decode to are asserted exactly.
@Suite struct GPIOBoardReplayTests {
    static let ms: UInt64 = 1_000_000

    /// What the reorder window promises, from the recorded reads alone: every
    /// edge (and every re-read that disagrees) once, each delivered exactly
    /// when its 3 ms have passed on the loop's clock, or at the take that
    /// brought it if that was later; edges going out at the same instant in
    /// timestamp order.
    static func expectedDeliveries(_ replay: BoardReplay) -> [BoardReplay.Delivery] {
        let roles: [InputLine] = [.playPause, .next, .previous, .encoderSwitch, .encoderA, .encoderB]
        var resync = LineLevelResync()
        var out: [BoardReplay.Delivery] = []
        for (takenAt, read) in replay.reads {
            for edge in resync.edges(line: roles[read.input], events: read.events, reread: read.reread, rereadAt: read.readAt) {
                out.append(.init(edge: edge, at: max(takenAt, edge.at.nanoseconds + GPIOBoard.reorderWindowNs)))
            }
        }
        // Out in delivery order; edges going out together in timestamp order, equal ones as they came.
        return out.enumerated().sorted { ($0.element.at, $0.element.edge.at, $0.offset) < ($1.element.at, $1.element.edge.at, $1.offset) }
            .map(\.element)
    }

    /// v1, turn -8 at 500 µs per transition with bounce (the drains logged in
    /// the VM, RecordedTurns): the board delivers all 160 edges, in order,
    /// 3 ms after each, and the knob moves exactly -8.
    @Test func aConvertedV1BouncyTurnCountsMinusEight() throws {
        let replay = try BoardReplay("v1", "converted-turn-minus-8")
        try replay.run()
        #expect(replay.lines.mismatches == [])
        #expect(replay.lines.isFinished)
        #expect(replay.failures == [])
        #expect(replay.deliveries.count == 160)
        #expect(replay.deliveries == Self.expectedDeliveries(replay))
        #expect(replay.detentsPerTurn() == [-8])
        #expect(replay.inputEvents() == Array(repeating: .knob(detents: -1, steps: -1), count: 8))
    }
}
