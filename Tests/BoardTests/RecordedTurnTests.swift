// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
@testable import Board

/// Fast bouncy encoder turns recorded in the HIL VM (``RecordedTurns``: every
/// pull hil-probe wrote, every drain of a phase's kernel queue), replayed
/// through the board's own path — ``LineLevelResync``, ``EdgeReorder``
/// released at the recorded read instants, the core's ``QuadratureDecoder``.
/// No real time: the recorded timestamps are the clock.
@Suite struct RecordedTurnTests {
    struct Pull { var line: InputLine; var at: UInt64; var isActive: Bool }
    struct Read { var line: InputLine; var at: UInt64; var events: [LineLevelResync.Event] }

    static func parse(_ text: String) -> (pulls: [Pull], reads: [Read]) {
        var pulls: [Pull] = [], reads: [Read] = []
        for item in text.split(whereSeparator: { $0 == ";" || $0 == "\n" }) {
            let f = item.split(separator: " ")
            guard f.count >= 3, let at = UInt64(f[2]) else { continue }
            let line: InputLine = f[1] == "A" ? .encoderA : .encoderB
            if f[0] == "p" { pulls.append(Pull(line: line, at: at, isActive: f[3] == "1")); continue }
            let events = f.dropFirst(3).compactMap { e -> LineLevelResync.Event? in
                let p = e.split(separator: "@")
                guard p.count == 2, let ts = UInt64(p[1]) else { return nil }
                return .init(isActive: p[0] == "1", at: ts)
            }
            reads.append(Read(line: line, at: at, events: events))
        }
        return (pulls, reads)
    }

    /// The line's level after the last pull at or before `at` (what a re-read sees).
    static func level(_ pulls: [Pull], _ line: InputLine, at: UInt64) -> Bool? {
        pulls.last { $0.line == line && $0.at <= at }?.isActive
    }

    /// Replays the drains through the board's path and counts detents; with
    /// `reread`, a drain that may have lost edges (a whole 16-edge v1 queue)
    /// re-reads the line, as the reader thread does. Returns the detents and
    /// the decoder's phases at the end.
    static func replay(_ reads: [Read], reread pulls: [Pull]? = nil, decoder start: QuadratureDecoder = .init(stepsPerDetent: 4))
        -> (detents: Int, decoder: QuadratureDecoder) {
        var resync = LineLevelResync()
        var reorder = EdgeReorder(windowNs: GPIOBoard.reorderWindowNs)
        var decoder = start
        var detents = 0
        func deliver(_ edges: [LineEdge]) {
            for e in edges { detents += decoder.edge(phaseA: e.line == .encoderA, isActive: e.isActive) }
        }
        for (index, read) in reads.enumerated() {
            var level: Bool?
            if let pulls, LineLevelResync.mayHaveLost(read.events, queueSize: 16) { level = Self.level(pulls, read.line, at: read.at) }
            reorder.add(resync.edges(line: read.line, events: read.events, reread: level, rereadAt: read.at))
            // One wake-up drains A, then B, then releases (the debug log between
            // the two drains takes ~0.5 ms in the VM).
            let next = index + 1 < reads.count ? reads[index + 1] : nil
            if read.line == .encoderA, let next, next.line == .encoderB, next.at < read.at + 1_500_000 { continue }
            deliver(reorder.release(now: read.at))
        }
        deliver(reorder.release(now: .max))
        return (detents, decoder)
    }

    /// The drains a reader that never falls behind would make: every pull as one
    /// edge of its own type, read right after it was written (as in the VM
    /// with the reader thread, where each drain held one edge).
    static func drainedAsWritten(_ pulls: [Pull]) -> [Read] {
        pulls.map { Read(line: $0.line, at: $0.at + 50_000, events: [.init(isActive: $0.isActive, at: $0.at + 20_000)]) }
    }

    /// A clean one-detent turn (A leads: +1), after `start`.
    static func oneDetentAfter(_ decoder: QuadratureDecoder) -> Int {
        var d = decoder
        var n = 0
        for (a, level) in [(true, true), (false, true), (true, false), (false, false)] { n += d.edge(phaseA: a, isActive: level) }
        return n
    }

    /// v1 before the reader thread: the loop thread was away for 6–10 ms, the
    /// 16-edge kernel queues filled and the kernel dropped the newest edges.
    /// Every edge it did deliver had the right type; the runs of pulls with
    /// no edge follow the full reads. The pulls themselves decode to -5
    /// through the same path; the recorded reads to -4.
    @Test func theFailingV1TurnLostRunsOfEdgesInTheKernelNotTypes() {
        let (pulls, reads) = Self.parse(RecordedTurns.v1DroppedEdgesTurnMinus5)
        #expect(pulls.count == 100)
        var wrongType = 0
        for read in reads {
            for event in read.events where Self.level(pulls, read.line, at: event.at) != event.isActive { wrongType += 1 }
        }
        #expect(wrongType == 0, "the kernel's edge types match the pulls")
        let delivered = reads.reduce(0) { $0 + $1.events.count }
        #expect(delivered == 83, "17 of 100 pulls have no edge")
        #expect(reads.filter { $0.events.count == 16 }.count == 4, "the drops follow full 16-edge queues")
        #expect(Self.replay(reads).detents == -4)
        #expect(Self.replay(Self.drainedAsWritten(pulls)).detents == -5)
    }

    /// The re-read after each full queue puts the phases right: here that
    /// even completes the detent whose last edges were dropped (-5, not -4;
    /// a whole cycle inside a dropped run cannot come back), and the next turn
    /// counts exactly. Without it the decoder is left a phase off.
    @Test func theRereadPutsThePhasesRightAfterDroppedEdges() {
        let (pulls, reads) = Self.parse(RecordedTurns.v1DroppedEdgesTurnMinus5)
        let withReread = Self.replay(reads, reread: pulls)
        #expect(withReread.detents == -5)
        #expect(Self.oneDetentAfter(withReread.decoder) == 1)
        let without = Self.replay(reads)
        #expect(without.decoder != withReread.decoder, "the dropped edges left a phase wrong")
    }

    /// v1 with the reader thread (same VM, same load): every pull has its edge,
    /// each drain held one, and the turn of -8 counts -8.
    @Test func theReaderThreadsV1TurnCountsEveryDetent() {
        let (pulls, reads) = Self.parse(RecordedTurns.v1ReaderThreadTurnMinus8)
        #expect(pulls.count == 160)
        #expect(reads.reduce(0) { $0 + $1.events.count } == 160)
        #expect(Self.replay(reads, reread: pulls).detents == -8)
    }

    @Test func aDrainMayHaveLostEdgesWhenItReadAWholeQueueOrTheKernelSaysSo() {
        let edge = LineLevelResync.Event(isActive: true, at: 1)
        #expect(!LineLevelResync.mayHaveLost(Array(repeating: edge, count: 15), queueSize: 16))
        #expect(LineLevelResync.mayHaveLost(Array(repeating: edge, count: 16), queueSize: 16))
        #expect(LineLevelResync.mayHaveLost([LineLevelResync.Event(isActive: true, at: 1, lost: 3)], queueSize: 1024))
        #expect(!LineLevelResync.mayHaveLost([edge], queueSize: 1024))
    }

    @Test func aRereadThatAgreesAddsNothingOneThatDisagreesAddsOneEdge() {
        var r = LineLevelResync()
        let up = LineLevelResync.Event(isActive: true, at: 1_000)
        #expect(r.edges(line: .encoderA, events: [up], reread: true, rereadAt: 2_000).count == 1)
        #expect(r.resyncs == 0)
        let out = r.edges(line: .encoderA, events: [LineLevelResync.Event(isActive: true, at: 3_000)], reread: false, rereadAt: 4_000)
        #expect(out.map(\.isActive) == [true, false])
        #expect(out.last?.at == MonotonicInstant(nanoseconds: 4_000))
        #expect(r.resyncs == 1)
        // The level is now known to be inactive: a later agreeing re-read adds nothing.
        #expect(r.edges(line: .encoderA, events: [], reread: false, rereadAt: 5_000).isEmpty)
    }
}
