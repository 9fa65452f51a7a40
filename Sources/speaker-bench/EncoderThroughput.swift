// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// Decoding speed of the knob path: how many quadrature edges per second
/// `QuadratureDecoder` alone, and the full `InputDecoders` (which also runs
/// the button deadlines and builds `InputEvent`s), get through on this CPU.
/// Every reported detent is tallied against the input, so the optimiser
/// cannot drop the work and a wrong decode shows up as missed/ghost detents.
/// Runs on the calling thread.
struct EncoderThroughput {
    /// Phase changes fed to each decoder (about; rounded up to whole detents).
    var edges = 10_000_000
    /// Fixes the pattern of clockwise/counter-clockwise runs.
    var seed: UInt64 = 0x5EED_0001

    /// Timed runs per decoder; the median is reported.
    var repeats = 3

    /// Runs both measurements and reports `quadrature_edges_per_second`,
    /// `input_decoder_edges_per_second` and, for both decoders together,
    /// `encoder_missed_detents_clean` / `encoder_ghost_detents_clean`.
    func run(report: BenchReport) {
        let (changes, expected) = QuadratureMotion.alternatingRuns(edges: edges, seed: seed)
        report.note("encoder: \(changes.count) clean edges, \(expected.expectedClockwise) cw + \(expected.expectedCounterClockwise) ccw detents, median of \(repeats) runs")

        let quadrature = RepeatedTiming.median(repeats: repeats) { decodeQuadrature(changes, expected: expected) }
        report.metric("quadrature_edges_per_second", Double(changes.count) / quadrature.seconds, unit: "edges/s")
        report.note("QuadratureDecoder: \(quadrature.first.summary)")

        let decoders = RepeatedTiming.median(repeats: repeats) { decodeInputDecoders(changes, expected: expected) }
        report.metric("input_decoder_edges_per_second", Double(changes.count) / decoders.seconds, unit: "edges/s")
        report.note("InputDecoders: \(decoders.first.summary)")

        report.metric("encoder_missed_detents_clean", Double(quadrature.first.missed + decoders.first.missed), unit: "count")
        report.metric("encoder_ghost_detents_clean", Double(quadrature.first.ghost + decoders.first.ghost), unit: "count")
    }

    /// Feeds every change to a fresh `QuadratureDecoder(stepsPerDetent: 4)`.
    private func decodeQuadrature(_ changes: [PhaseChange], expected: DetentTally) -> DetentTally {
        var decoder = QuadratureDecoder(stepsPerDetent: 4)
        var tally = expected
        for change in changes {
            let detent = decoder.edge(phaseA: change.phaseA, isActive: change.isActive)
            if detent != 0 { tally.record(detent) }
        }
        return tally
    }

    /// Feeds every change, as a `LineEdge` 125 µs after the previous one
    /// (2,000 detents/s), to fresh `InputDecoders` with the default inputs
    /// configuration. Building the `LineEdge` is part of the timed loop, as
    /// it is in the speaker.
    private func decodeInputDecoders(_ changes: [PhaseChange], expected: DetentTally) -> DetentTally {
        var decoders = InputDecoders(config: InputsSection())
        var tally = expected
        var at: UInt64 = 1_000_000_000
        for change in changes {
            at += 125_000
            let edge = LineEdge(line: change.phaseA ? .encoderA : .encoderB, isActive: change.isActive,
                                at: MonotonicInstant(nanoseconds: at))
            for event in decoders.edge(edge) {
                if case .knob(let detents, _) = event { tally.record(detents) }
            }
        }
        return tally
    }
}
