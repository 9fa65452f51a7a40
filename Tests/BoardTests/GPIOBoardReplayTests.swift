// SPDX-License-Identifier: Apache-2.0
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

    // MARK: Recorded in the HIL VM (HIL_GPIO_TRACE=1 Tests/HIL/run), v1 and v2 builds

    /// Replays a recorded scenario and checks what every replay must show:
    /// the board made every recorded call again and nothing else, nothing
    /// failed, each edge went out exactly when the reorder window says, and
    /// the edges are the ones the speaker delivered in the VM.
    static func replayed(_ variant: String, _ name: String) throws -> BoardReplay {
        let replay = try BoardReplay(variant, name)
        try replay.run()
        #expect(replay.lines.mismatches == [])
        #expect(replay.lines.isFinished)
        #expect(replay.failures == [])
        #expect(replay.deliveries == Self.expectedDeliveries(replay))
        #expect(replay.edges.map(\.description) == replay.deliveredInTheVM)
        return replay
    }

    /// The kernel's events of one line, as the board reports them.
    static func recordedEdges(_ replay: BoardReplay, _ line: InputLine, input: Int) -> [LineEdge] {
        replay.reads.filter { $0.read.input == input }.flatMap(\.read.events)
            .map { LineEdge(line: line, isActive: $0.isActive, at: MonotonicInstant(nanoseconds: $0.at)) }
    }

    @Test(arguments: ["v1", "v2"]) func aPressIsOnePressAndItsTwoEdges(variant: String) throws {
        let replay = try Self.replayed(variant, "press")
        #expect(replay.edges == Self.recordedEdges(replay, .playPause, input: 0))
        #expect(replay.edges.map(\.isActive) == [true, false])
        #expect(replay.inputEvents() == [.button(.playPause, .down), .button(.playPause, .press)])
    }

    /// v1 passes the contact bounce on (the core debounces it); v2 asks the
    /// kernel for 5 ms of debounce, so only the press and the release arrive.
    @Test(arguments: ["v1", "v2"]) func aBouncyPressIsOnePress(variant: String) throws {
        let replay = try Self.replayed(variant, "bouncy-press")
        #expect(replay.edges == Self.recordedEdges(replay, .playPause, input: 0))
        if variant == "v1" { #expect(replay.edges.count > 2) } else { #expect(replay.edges.map(\.isActive) == [true, false]) }
        #expect(replay.inputEvents() == [.button(.playPause, .down), .button(.playPause, .press)])
    }

    @Test(arguments: ["v1", "v2"]) func bouncyTurnsCountTheirDetentsExactly(variant: String) throws {
        let replay = try Self.replayed(variant, "turns")
        #expect(replay.detentsPerTurn() == [3, -2])
        #expect(replay.inputEvents() == Array(repeating: .knob(detents: 1, steps: 1), count: 3)
                + Array(repeating: .knob(detents: -1, steps: -1), count: 2))
    }

    /// 500 µs per transition with bounce: 5 edges per millisecond per phase.
    @Test(arguments: ["v1", "v2"]) func theFastestBouncyTurnsCountTheirDetentsExactly(variant: String) throws {
        let replay = try Self.replayed(variant, "fast-turns")
        #expect(replay.deliveries.count == 260)
        #expect(replay.detentsPerTurn() == [-5, 8])
    }

    /// Turned while the speaker was stopped: one take brings A's four edges,
    /// then B's. In that order the decoder would miscount; the reorder
    /// releases them in timestamp order (those whose window has passed at
    /// once, the rest on its timer), and the two detents count.
    @Test(arguments: ["v1", "v2"]) func aBurstOfBothPhasesIsPutInOrder(variant: String) throws {
        let replay = try Self.replayed(variant, "burst")
        let arrived = Self.recordedEdges(replay, .encoderA, input: 4) + Self.recordedEdges(replay, .encoderB, input: 5)
        #expect(replay.edges.count == 8)
        #expect(replay.edges != arrived)
        #expect(replay.edges == arrived.sorted { $0.at < $1.at })
        #expect(replay.detentsPerTurn() == [2])
        var quadrature = QuadratureDecoder(stepsPerDetent: 4)
        #expect(arrived.reduce(0) { $0 + quadrature.edge(phaseA: $1.line == .encoderA, isActive: $1.isActive) } != 2)
    }

    /// 110 bouncy detents while the speaker was stopped, ending with phase A
    /// held active: each phase's kernel queue overflowed, so the reader
    /// re-read both lines. v1 keeps the oldest 16 edges: A's last kept edge
    /// is inactive, and the board adds one edge with the level re-read, dated
    /// at the re-read. v2 keeps the newest 1024: the last edge is right and
    /// nothing is added. Either way, once A is let go, the next clean detent
    /// counts exactly.
    @Test(arguments: ["v1", "v2"]) func lostEdgesArePutRightByTheReread(variant: String) throws {
        let replay = try Self.replayed(variant, "lost-edges")
        let full = replay.reads.map(\.read).filter { $0.events.count >= replay.lines.library.eventQueueSize }
        try #require(full.map(\.input) == [4, 5])
        #expect(full.map(\.reread) == [true, false])
        let kernel = Set(Self.recordedEdges(replay, .encoderA, input: 4) + Self.recordedEdges(replay, .encoderB, input: 5))
        let added = replay.edges.filter { !kernel.contains($0) }
        if variant == "v1" {
            #expect(full.map { $0.events.last?.isActive } == [false, false])
            #expect(added == [LineEdge(line: .encoderA, isActive: true, at: MonotonicInstant(nanoseconds: full[0].readAt))])
        } else {
            #expect(full.map { $0.events.last?.isActive } == [true, false])
            #expect(added == [])
        }
        #expect(replay.detentsPerTurn().last == 1)
    }
}
