// SPDX-License-Identifier: Apache-2.0
/// The physical input lines the speaker reads: three transport buttons, the
/// encoder's push switch and the encoder's two quadrature phases.
public enum InputLine: String, CaseIterable, Hashable, Sendable {
    case playPause, next, previous, encoderSwitch, encoderA, encoderB

    /// True for the push buttons (everything but the encoder phases).
    public var isButton: Bool { self != .encoderA && self != .encoderB }
}

/// One level change on an input line, as the kernel (or the simulated board)
/// reports it: which line, its new *logical* level (`isActive` is true when a
/// button is pressed or an encoder phase is closed, after `activeLow` has been
/// applied) and the monotonic timestamp of the change.
public struct LineEdge: Hashable, Sendable, CustomStringConvertible {
    public var line: InputLine
    public var isActive: Bool
    public var at: MonotonicInstant

    public init(line: InputLine, isActive: Bool, at: MonotonicInstant) {
        self.line = line
        self.isActive = isActive
        self.at = at
    }

    public var description: String { "\(line.rawValue)=\(isActive ? 1 : 0)@\(at)" }
}
