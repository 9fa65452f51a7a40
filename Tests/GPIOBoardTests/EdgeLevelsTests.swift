import Testing
import SpeakerCore
import Board

/// ``EdgeLevels`` against the event sequences the kernel produces on a busy
/// system, fed through the real quadrature decoder: the count must be exact
/// whatever the reported edge types were.
@Suite struct EdgeLevelsTests {
    /// Feeds (line, timestamp) events, then the reads after draining, merged
    /// in timestamp order into a decoder; returns the detents counted.
    private func detents(_ events: [(Int, UInt64)], reads: [Bool]) -> Int {
        var levels = EdgeLevels(initial: [false, false])
        var edges: [(Int, Bool, UInt64)] = events.map { ($0.0, levels.event(line: $0.0, at: $0.1), $0.1) }
        for line in 0..<2 {
            if let at = levels.reconcile(line: line, read: reads[line]) { edges.append((line, reads[line], at)) }
        }
        var decoder = QuadratureDecoder(stepsPerDetent: 4)
        return edges.enumerated().sorted { ($0.element.2, $0.offset) < ($1.element.2, $1.offset) }
            .reduce(0) { $0 + decoder.edge(phaseA: $1.element.0 == 0, isActive: $1.element.1) }
    }

    @Test func everyEventToggles() {
        // One detent, each edge its own event (types ignored): A on, B on, A off, B off.
        #expect(detents([(0, 10), (1, 20), (0, 30), (1, 40)], reads: [false, false]) == 1)
        #expect(detents([(1, 10), (0, 20), (1, 30), (0, 40)], reads: [false, false]) == -1)
    }

    @Test func bounceBurstsReportedLateStillCount() {
        // Each phase change bounces: 5 edges (on, off, on, off, on) per change.
        var events: [(Int, UInt64)] = []
        var t: UInt64 = 0
        for line in [0, 1, 0, 1] { for _ in 0..<5 { t += 1; events.append((line, t)) } ; t += 100 }
        #expect(detents(events, reads: [false, false]) == 1)
    }

    @Test func mergedEventsAreCorrectedByTheRead() {
        // B's last change bounces (off, on, off at 400, 401, 402); the kernel
        // merged the first two edges into one event, dated at the later one
        // (its hard interrupt overwrites the timestamp): parity is off by one.
        let events: [(Int, UInt64)] = [(0, 100), (1, 200), (0, 300), (1, 401), (1, 402)]
        #expect(detents(events, reads: [false, false]) == 1)
        // The toggles alone leave B on; the read puts it back, so the next detent starts at rest.
        var levels = EdgeLevels(initial: [false, false])
        for (line, at) in events { _ = levels.event(line: line, at: at) }
        #expect(levels.levels == [false, true])
        #expect(levels.reconcile(line: 1, read: false) == 403)
        #expect(levels.levels == [false, false])
    }

    @Test func agreeingReadAddsNothing() {
        var levels = EdgeLevels(initial: [true])
        #expect(levels.event(line: 0, at: 5) == false)
        #expect(levels.reconcile(line: 0, read: false) == nil)
        #expect(levels.reconcile(line: 0, read: true) == 6, "dated 1 ns after the line's last event")
        #expect(levels.levels == [true])
    }
}
