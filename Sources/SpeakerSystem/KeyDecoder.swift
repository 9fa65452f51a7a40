// SPDX-License-Identifier: Apache-2.0
/// A key read from the terminal by ``TerminalKeys``.
public enum Key: Hashable, Sendable {
    case space, enter, escape, backspace, tab
    case up, down, left, right
    /// A printable ASCII character other than space (letters, digits, punctuation).
    case character(Character)
    /// Another control byte (Ctrl-A is 0x01 …).
    case control(UInt8)
    /// Standard input was closed (end of file).
    case endOfInput
}

/// Turns raw terminal bytes into ``Key``s: ASCII, and the arrow-key escape
/// sequences `ESC [ A/B/C/D` (and `ESC O A/B/C/D` in application mode).
/// Other escape sequences (F-keys, Delete …) are consumed and ignored;
/// non-ASCII bytes are ignored. A sequence split across reads is completed
/// by the next ``feed(_:)``; a lone ESC is reported when the next byte comes.
///
/// A value type; use from one thread at a time.
public struct KeyDecoder: Sendable {
    private enum State: Sendable { case ground, escape, sequence }
    private var state = State.ground

    /// A decoder in its initial state.
    public init() {}

    /// Decodes `bytes`, keeping an unfinished escape sequence for later.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Key] {
        var keys: [Key] = []
        for byte in bytes {
            switch state {
            case .ground:
                if byte == 0x1B { state = .escape } else if let key = Self.plain(byte) { keys.append(key) }
            case .escape:
                if byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O") {
                    state = .sequence
                } else {
                    keys.append(.escape)
                    state = .ground
                    if byte == 0x1B { state = .escape } else if let key = Self.plain(byte) { keys.append(key) }
                }
            case .sequence:
                // Parameter and intermediate bytes are 0x20–0x3F; a final byte ends it.
                if (0x40...0x7E).contains(byte) {
                    state = .ground
                    switch byte {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    case UInt8(ascii: "C"): keys.append(.right)
                    case UInt8(ascii: "D"): keys.append(.left)
                    default: break
                    }
                } else if !(0x20...0x3F).contains(byte) {
                    state = .ground  // malformed: drop it
                }
            }
        }
        return keys
    }

    private static func plain(_ byte: UInt8) -> Key? {
        switch byte {
        case 0x20: return .space
        case 0x0D, 0x0A: return .enter
        case 0x09: return .tab
        case 0x7F, 0x08: return .backspace
        case 0x21...0x7E: return .character(Character(Unicode.Scalar(byte)))
        case 0x00..<0x20: return .control(byte)
        default: return nil
        }
    }
}
