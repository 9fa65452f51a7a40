// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem

/// What a key does in `ambient-speaker demo`.
public enum DemoKeyAction: Equatable, Sendable {
    /// Send this command to the ``SimulatedBoard``.
    case boardCommand(String)
    /// Leave the demo (main restores the terminal and exits).
    case quit
}

/// The `demo` key map: space → `press playPause`, n → `press next`,
/// p → `press previous`, → → `turn +1`, ← → `turn -1`, q (or end of input)
/// → quit. Pure; any thread.
public enum DemoKeyboard {
    /// The action for `key`, or nil when the key does nothing.
    public static func action(for key: Key) -> DemoKeyAction? {
        switch key {
        case .space: return .boardCommand("press playPause")
        case .character("n"), .character("N"): return .boardCommand("press next")
        case .character("p"), .character("P"): return .boardCommand("press previous")
        case .right: return .boardCommand("turn +1")
        case .left: return .boardCommand("turn -1")
        case .character("q"), .character("Q"), .endOfInput: return .quit
        default: return nil
        }
    }

    /// One line of help for the demo screen.
    public static let help = "space play/pause · n next · p previous · ← → volume · q quit"
}
