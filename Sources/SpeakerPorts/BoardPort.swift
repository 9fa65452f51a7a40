// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// The speaker's board as the board service drives it: its input lines in
/// (edges for the core's decoders), the step-only amplifier's UP/DOWN lines
/// out. The live board (Board: simulated or libgpiod) is chosen by
/// `board.kind`. Loop thread only.
public protocol BoardPort: AnyObject {
    /// Opens the board: each edge goes to `onEdge`, a hardware failure while
    /// running to `onFailure` (the speaker then stops with its exit code).
    func open(onEdge: @escaping (LineEdge) -> Void, onFailure: @escaping (BoardFailure) -> Void) throws(BoardFailure)
    /// Queues pulses for the amplifier's UP/DOWN lines (`gpio-step` mode; ignored otherwise).
    func step(_ pulse: AmpPulse)
    /// Shows a pattern on the status LED (`statusLed`; ignored without one).
    func showStatus(_ pattern: StatusLedPattern)
    /// Releases everything `open` opened, both amp lines inactive first.
    func close()
}

extension BoardPort {
    /// A board without a status LED shows nothing.
    public func showStatus(_ pattern: StatusLedPattern) {}
}

/// Why the board did not open or stopped working: its words and the exit
/// code the speaker stops with.
public struct BoardFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public var exitCode: Int32
    public var message: String

    public init(exitCode: Int32, message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    public var description: String { message }
}
