// SPDX-License-Identifier: Apache-2.0
import SeededRandom
import SpeakerCore

/// Encoder robustness at speed: 2,000 detents/s with contact bounce on every
/// edge, fed with timestamps through `InputDecoders` (acceleration off), and
/// scored as missed and ghost detents. Measures; asserts nothing. Runs on the
/// calling thread.
///
/// ## The bounce model, and why 0.4 ms cannot fit literally
///
/// At 2,000 detents/s with four transitions per detent, the nominal
/// transitions are 125 µs apart and alternate between the phases
/// (A, B, A, B, …): each phase changes every 250 µs. A 0.4 ms bounce burst
/// is longer than both gaps, so "0.4 ms of bounce on every edge" is not a
/// physical state at this speed — the contact would never settle. (It is
/// also about 100 revolutions per second on a 20-detent EC11; no hand turns
/// a knob that fast. The speed is a stress level, not a use case.)
///
/// Bounce is chatter of the contact that is *changing*: a few alternating
/// toggles of that phase, ending at its new level, while the other phase's
/// contact sits still. Two models are measured:
///
/// - **Confined** (the headline `encoder_missed_detents` /
///   `encoder_ghost_detents`): the burst of a transition at `t` lies in the
///   window since the previous transition (of either phase), so the other
///   phase is stable during it. The window is min(0.4 ms, 125 µs) = 125 µs
///   here; at 500 detents/s or slower the full 0.4 ms fits.
/// - **Overlapping** (`…_overlapping_bounce`): the literal reading — the
///   burst reaches back up to 0.4 ms, limited only by the same phase's own
///   previous transition (250 µs), so it straddles the other phase's
///   transition. A phase then chatters while the other one moves, which to
///   any table decoder is indistinguishable from turning back and forth.
///
/// In both, a burst is 2 or 4 toggles (seeded) at random instants inside its
/// window, followed by the settled edge at the nominal instant; all edges are
/// fed in time order.
struct EncoderBounce {
    /// Detents turned clockwise, then the same number counter-clockwise.
    var detentsPerDirection = 20_000
    /// Turning speed.
    var detentsPerSecond = 2_000
    /// Longest bounce burst before a settled edge.
    var bounceNanoseconds: UInt64 = 400_000
    /// Fixes the bounce pattern.
    var seed: UInt64 = 0xB0B0_CE00

    /// Runs both models and reports `encoder_missed_detents`,
    /// `encoder_ghost_detents` and their `_overlapping_bounce` variants.
    func run(report: BenchReport) {
        let confined = decode(overlapping: false)
        report.note("bounce (confined, \(confined.edges) edges incl. bounce): \(confined.tally.summary)")
        report.metric("encoder_missed_detents", Double(confined.tally.missed), unit: "count")
        report.metric("encoder_ghost_detents", Double(confined.tally.ghost), unit: "count")

        let overlapping = decode(overlapping: true)
        report.note("bounce (overlapping, \(overlapping.edges) edges incl. bounce): \(overlapping.tally.summary)")
        report.metric("encoder_missed_detents_overlapping_bounce", Double(overlapping.tally.missed), unit: "count")
        report.metric("encoder_ghost_detents_overlapping_bounce", Double(overlapping.tally.ghost), unit: "count")
    }

    /// Builds the bouncing edge stream for one model and decodes it.
    private func decode(overlapping: Bool) -> (edges: Int, tally: DetentTally) {
        var tally = DetentTally()
        tally.expectedClockwise = detentsPerDirection
        tally.expectedCounterClockwise = detentsPerDirection
        let edges = bouncingEdges(overlapping: overlapping)
        var config = InputsSection()
        config.encoder.acceleration = false
        var decoders = InputDecoders(config: config)
        for edge in edges {
            for event in decoders.edge(edge) {
                if case .knob(let detents, _) = event { tally.record(detents) }
            }
        }
        return (edges.count, tally)
    }

    /// The clean transitions (clockwise run, then counter-clockwise run),
    /// each preceded by its bounce burst, sorted by time.
    private func bouncingEdges(overlapping: Bool) -> [LineEdge] {
        var random = SplitMix64(seed: seed ^ (overlapping ? 0xFFFF : 0))
        let gap = UInt64(1_000_000_000 / (4 * max(detentsPerSecond, 1)))
        let clean = (0..<detentsPerDirection).flatMap { _ in QuadratureMotion.clockwiseDetent }
            + (0..<detentsPerDirection).flatMap { _ in QuadratureMotion.counterClockwiseDetent }
        // (time, order) keeps the sort total; edges of one phase never share a window.
        var timed: [(at: UInt64, order: Int, edge: LineEdge)] = []
        timed.reserveCapacity(clean.count * 5)
        let origin: UInt64 = 1_000_000_000
        for (index, change) in clean.enumerated() {
            let at = origin + UInt64(index + 1) * gap
            let line: InputLine = change.phaseA ? .encoderA : .encoderB
            // Confined: since the previous transition (other phase stable).
            // Overlapping: since this phase's own previous transition.
            let window = min(bounceNanoseconds, overlapping ? 2 * gap : gap)
            let toggles = random.next() % 2 == 0 ? 2 : 4
            var instants = (0..<toggles).map { _ in at - window + 1 + random.next() % (window - 1) }
            instants.sort()
            for (n, instant) in instants.enumerated() {
                // First touch reaches the new level, then it alternates; the settled edge follows.
                let level = n % 2 == 0 ? change.isActive : !change.isActive
                timed.append((instant, timed.count, LineEdge(line: line, isActive: level, at: MonotonicInstant(nanoseconds: instant))))
            }
            timed.append((at, timed.count, LineEdge(line: line, isActive: change.isActive, at: MonotonicInstant(nanoseconds: at))))
        }
        timed.sort { ($0.at, $0.order) < ($1.at, $1.order) }
        return timed.map(\.edge)
    }
}
