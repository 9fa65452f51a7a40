// SPDX-License-Identifier: Apache-2.0
/// Counts detents a decoder reported against the detents the input really
/// contained, per direction, and turns the difference into missed and ghost
/// detents. Value type; one thread.
struct DetentTally: Equatable {
    /// Clockwise (+1) detents in the input.
    var expectedClockwise = 0
    /// Counter-clockwise (-1) detents in the input.
    var expectedCounterClockwise = 0
    /// Clockwise detents the decoder reported.
    var clockwise = 0
    /// Counter-clockwise detents the decoder reported.
    var counterClockwise = 0

    /// Adds a decoder's report of `detents` (positive clockwise, negative counter-clockwise).
    mutating func record(_ detents: Int) {
        if detents > 0 { clockwise += detents } else { counterClockwise -= detents }
    }

    /// Detents in the input that the decoder did not report (per direction).
    var missed: Int {
        max(0, expectedClockwise - clockwise) + max(0, expectedCounterClockwise - counterClockwise)
    }

    /// Detents the decoder reported that the input did not contain (per direction).
    var ghost: Int {
        max(0, clockwise - expectedClockwise) + max(0, counterClockwise - expectedCounterClockwise)
    }

    /// "cw got/expected, ccw got/expected" for stderr.
    var summary: String {
        "cw \(clockwise)/\(expectedClockwise), ccw \(counterClockwise)/\(expectedCounterClockwise)"
    }
}
