// SPDX-License-Identifier: Apache-2.0
/// Decodes a two-phase rotary encoder (EC11-style) from its A/B edges into
/// detents, with a transition table that ignores invalid transitions.
///
/// Each valid Gray-code transition moves a quarter-step accumulator by ±1;
/// a transition that changes both phases at once (a missed edge) is ignored.
/// A detent is counted only when the phases return to a rest state with the
/// accumulator at ±`stepsPerDetent` — a full valid cycle — so bounce on one
/// phase (which walks the accumulator forth and back) can never produce a
/// step, and a half turn that goes back produces none either.
public struct QuadratureDecoder: Equatable, Sendable {
    /// Quarter steps per detent: 4 (full cycle per detent), 2 or 1.
    public let stepsPerDetent: Int
    private var a = false
    private var b = false
    private var accumulator = 0

    /// Rows: old state (a<<1|b), columns: new state; +1 = clockwise quarter step
    /// (A leads B), -1 = counter-clockwise, 0 = no change or invalid (both changed).
    private static let table: [[Int8]] = [
        //  00  01  10  11   (new)
        [0, -1, +1, 0],   // from 00
        [+1, 0, 0, -1],   // from 01
        [-1, 0, 0, +1],   // from 10
        [0, +1, -1, 0],   // from 11
    ]

    public init(stepsPerDetent: Int = 4) {
        self.stepsPerDetent = [1, 2, 4].contains(stepsPerDetent) ? stepsPerDetent : 4
    }

    private var state: Int { (a ? 2 : 0) | (b ? 1 : 0) }

    /// Whether the phases are at a detent (rest) position for this resolution.
    private var atRest: Bool {
        switch stepsPerDetent {
        case 4: return state == 0
        case 2: return state == 0 || state == 3
        default: return true
        }
    }

    /// Feeds one phase edge (`phaseA` true for A). Returns +1, -1 or 0 detents.
    public mutating func edge(phaseA: Bool, isActive: Bool) -> Int {
        let old = state
        if phaseA { a = isActive } else { b = isActive }
        let new = state
        guard old != new else { return 0 }
        accumulator += Int(Self.table[old][new])
        guard atRest else { return 0 }
        defer { accumulator = 0 }
        if accumulator >= stepsPerDetent { return 1 }
        if accumulator <= -stepsPerDetent { return -1 }
        return 0
    }
}
