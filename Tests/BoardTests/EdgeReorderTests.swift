// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import Board

/// ``EdgeReorder`` with manual time: edges read from two lines' queues out of
/// order come out in kernel-timestamp order once their window has passed.
@Suite struct EdgeReorderTests {
    private func edge(_ line: InputLine, _ active: Bool, _ us: UInt64) -> LineEdge {
        LineEdge(line: line, isActive: active, at: MonotonicInstant(nanoseconds: us * 1_000))
    }

    @Test func aLateQueueIsMergedInTimestampOrder() {
        var r = EdgeReorder(windowNs: 3_000_000)
        // B's queue was read first, A's earlier edge only on the next read.
        r.add([edge(.encoderB, true, 10_113)])
        #expect(r.release(now: 10_500_000).isEmpty, "held for 3 ms")
        r.add([edge(.encoderA, false, 10_070)])
        #expect(r.nextRelease == 13_070_000)
        let out = r.release(now: 13_113_000)
        #expect(out == [edge(.encoderA, false, 10_070), edge(.encoderB, true, 10_113)])
        #expect(r.nextRelease == nil)
    }

    @Test func oneLinesEdgesKeepTheirOrderAtEqualTimestamps() {
        var r = EdgeReorder(windowNs: 1_000)
        r.add([edge(.encoderA, true, 5), edge(.encoderA, false, 5), edge(.encoderB, true, 4)])
        #expect(r.release(now: 10_000) == [edge(.encoderB, true, 4), edge(.encoderA, true, 5), edge(.encoderA, false, 5)])
    }

    @Test func onlyDueEdgesAreReleased() {
        var r = EdgeReorder(windowNs: 3_000_000)
        r.add([edge(.playPause, true, 1_000), edge(.playPause, false, 2_000)])
        #expect(r.release(now: 4_000_000) == [edge(.playPause, true, 1_000)])
        #expect(r.nextRelease == 5_000_000)
        #expect(r.release(now: 5_000_000) == [edge(.playPause, false, 2_000)])
    }

    /// Fast bouncy turns with the phases' queues read in the wrong order:
    /// through the reorder window the real decoder counts every detent.
    @Test func bouncyTurnsReadPhaseByPhaseCountExactly() {
        var events: [LineEdge] = []
        var t: UInt64 = 1_000
        for _ in 0..<5 {
            for (line, level) in [(InputLine.encoderA, true), (.encoderB, true), (.encoderA, false), (.encoderB, false)] {
                for flip in 0..<4 { events.append(edge(line, flip % 2 == 0 ? level : !level, t + UInt64(flip) * 100)) }
                events.append(edge(line, level, t + 400))
                t += 500
            }
        }
        #expect(count(events, windowNs: 3_000_000) == 5)
        #expect(count(events, windowNs: 0) != 5, "without the window the late queue loses detents")
    }

    /// Reads every 0.3 ms; A's queue lags B's by 1 ms (its interrupt thread runs late).
    private func count(_ all: [LineEdge], windowNs: UInt64) -> Int {
        var events = all
        var r = EdgeReorder(windowNs: windowNs)
        var decoder = QuadratureDecoder(stepsPerDetent: 4)
        var detents = 0
        var readAt: UInt64 = 0
        while !events.isEmpty || r.nextRelease != nil {
            readAt += 300
            let queued = { (e: LineEdge) in e.at.nanoseconds + (e.line == .encoderA ? 1_000_000 : 0) <= readAt * 1_000 }
            r.add(events.filter(queued))
            events.removeAll(where: queued)
            for e in r.release(now: readAt * 1_000) { detents += decoder.edge(phaseA: e.line == .encoderA, isActive: e.isActive) }
        }
        return detents
    }
}
