// SPDX-License-Identifier: Apache-2.0
import SeededRandom

/// One quadrature phase change: which phase (A or B) and its new logical
/// level. Two bytes, so ten million of them fit in 20 MB even on a Pi.
struct PhaseChange: Equatable {
    /// True for phase A, false for phase B.
    var phaseA: Bool
    /// The phase's new logical level (true = contact closed).
    var isActive: Bool
}

/// Clean (bounce-free) quadrature motion of an EC11-style encoder with four
/// transitions per detent, resting with both phases open. Clockwise from rest
/// is A=1, B=1, A=0, B=0 (A leads); counter-clockwise is B=1, A=1, B=0, A=0.
enum QuadratureMotion {
    /// The four phase changes of one clockwise detent, from rest back to rest.
    static let clockwiseDetent: [PhaseChange] = [
        PhaseChange(phaseA: true, isActive: true), PhaseChange(phaseA: false, isActive: true),
        PhaseChange(phaseA: true, isActive: false), PhaseChange(phaseA: false, isActive: false),
    ]

    /// The four phase changes of one counter-clockwise detent, from rest back to rest.
    static let counterClockwiseDetent: [PhaseChange] = [
        PhaseChange(phaseA: false, isActive: true), PhaseChange(phaseA: true, isActive: true),
        PhaseChange(phaseA: false, isActive: false), PhaseChange(phaseA: true, isActive: false),
    ]

    /// The phase changes of one detent in `clockwise` direction or the other.
    static func detent(clockwise: Bool) -> [PhaseChange] {
        clockwise ? clockwiseDetent : counterClockwiseDetent
    }

    /// At least `edges` phase changes (rounded up to whole detents) of
    /// alternating clockwise and counter-clockwise runs of 1–64 detents (run
    /// lengths from a seeded generator), and the detents they contain.
    static func alternatingRuns(edges: Int, seed: UInt64) -> (changes: [PhaseChange], tally: DetentTally) {
        var random = SplitMix64(seed: seed)
        var changes: [PhaseChange] = []
        changes.reserveCapacity(edges + 4 * 64)
        var tally = DetentTally()
        var clockwise = true
        while changes.count < edges {
            let run = 1 + Int(random.next() % 64)
            for _ in 0..<run {
                changes += detent(clockwise: clockwise)
            }
            if clockwise { tally.expectedClockwise += run } else { tally.expectedCounterClockwise += run }
            clockwise.toggle()
        }
        return (changes, tally)
    }
}
