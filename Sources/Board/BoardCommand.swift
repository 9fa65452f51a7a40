// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerSystem

/// One text command of the simulated board (`board.controlSocket` and the
/// `demo` keyboard), parsed. See ``parse(_:)`` for the grammar.
public enum BoardCommand: Equatable, Sendable {
    /// `press BUTTON`: down, the press duration (50 ms), up.
    case press(InputLine)
    /// `hold BUTTON MS`: down, `milliseconds`, up.
    case hold(InputLine, milliseconds: Int)
    /// `down BUTTON`: pressed until a later `up`.
    case down(InputLine)
    /// `up BUTTON`: released.
    case up(InputLine)
    /// `turn +N | -N`: N full quadrature cycles, clockwise when positive.
    case turn(detents: Int)
    /// `bounce on|off`: contact bounce on every later edge.
    case bounce(Bool)
    /// `pulses`: the amp UP/DOWN pulses recorded so far.
    case pulses
    /// `clock +SECONDS | -SECONDS`: steps the speaker's simulated wall clock.
    case clockStep(seconds: Int64)
    /// `clock synced on|off|host`: the simulated clock's NTP flag (host: the host's own).
    case clockSynced(Bool?)

    /// Longest accepted `hold`, in milliseconds.
    public static let maxHoldMilliseconds = 60_000
    /// Most detents one `turn` may ask for.
    public static let maxDetents = 100

    private static let buttons: [InputLine] = InputLine.allCases.filter(\.isButton)
    private static let buttonList = "playPause, next, previous or encoderSwitch"
    private static let commandList = "press, hold, down, up, turn, bounce, pulses or clock"

    /// Parses one command line (words separated by spaces or tabs; command
    /// and button names are case-insensitive). On failure the error's
    /// ``BoardCommandError/message`` says what was wrong and what was expected.
    /// Pure; any thread.
    public static func parse(_ text: String) -> Result<BoardCommand, BoardCommandError> {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).map(String.init)
        guard let verb = words.first?.lowercased() else {
            return .failure(BoardCommandError("empty command (expected \(commandList))"))
        }
        let arguments = Array(words.dropFirst())
        func count(_ expected: Int, _ usage: String) -> BoardCommandError? {
            arguments.count == expected ? nil : BoardCommandError(
                "\(verb) takes \(expected == 1 ? "one argument" : "\(expected) arguments"), got \(arguments.count) (usage: \(usage))")
        }
        switch verb {
        case "press", "down", "up":
            if let error = count(1, "\(verb) playPause|next|previous|encoderSwitch") {
                return .failure(error)
            }
            return button(arguments[0]).map { line in
                verb == "press" ? .press(line) : verb == "down" ? .down(line) : .up(line)
            }
        case "hold":
            if let error = count(2, "hold BUTTON MILLISECONDS") { return .failure(error) }
            return button(arguments[0]).flatMap { line in
                guard let ms = Int(arguments[1]), (1...maxHoldMilliseconds).contains(ms) else {
                    return .failure(BoardCommandError(
                        "bad number \"\(arguments[1])\" for hold: expected milliseconds 1–\(maxHoldMilliseconds)"))
                }
                return .success(.hold(line, milliseconds: ms))
            }
        case "turn":
            if let error = count(1, "turn +N|-N") { return .failure(error) }
            guard let detents = Int(arguments[0]), detents != 0, abs(detents) <= maxDetents else {
                return .failure(BoardCommandError(
                    "bad number \"\(arguments[0])\" for turn: expected detents like +3 or -2 (1–\(maxDetents), not 0)"))
            }
            return .success(.turn(detents: detents))
        case "bounce":
            if let error = count(1, "bounce on|off") { return .failure(error) }
            switch arguments[0].lowercased() {
            case "on": return .success(.bounce(true))
            case "off": return .success(.bounce(false))
            default: return .failure(BoardCommandError("bounce expects on or off, got \"\(arguments[0])\""))
            }
        case "pulses":
            if let error = count(0, "pulses") { return .failure(error) }
            return .success(.pulses)
        case "clock":
            return clock(arguments)
        default:
            return .failure(BoardCommandError("unknown command \"\(words[0])\" (expected \(commandList))"))
        }
    }

    /// `clock +N|-N` (seconds, at most ten years) or `clock synced on|off|host`.
    private static func clock(_ arguments: [String]) -> Result<BoardCommand, BoardCommandError> {
        let usage = "clock +SECONDS|-SECONDS or clock synced on|off|host"
        if arguments.count == 2 && arguments[0].lowercased() == "synced" {
            switch arguments[1].lowercased() {
            case "on": return .success(.clockSynced(true))
            case "off": return .success(.clockSynced(false))
            case "host": return .success(.clockSynced(nil))
            default: return .failure(BoardCommandError("clock synced expects on, off or host, got \"\(arguments[1])\""))
            }
        }
        guard arguments.count == 1, let first = arguments[0].first, first == "+" || first == "-",
              let seconds = Int64(arguments[0]), abs(seconds) <= SimulatedWallClock.maxStepSeconds else {
            return .failure(BoardCommandError("bad clock arguments \(arguments) (usage: \(usage); at most "
                                              + "\(SimulatedWallClock.maxStepSeconds) seconds)"))
        }
        return .success(.clockStep(seconds: seconds))
    }

    private static func button(_ name: String) -> Result<InputLine, BoardCommandError> {
        if let line = buttons.first(where: { $0.rawValue.lowercased() == name.lowercased() }) {
            return .success(line)
        }
        return .failure(BoardCommandError("unknown button \"\(name)\" (expected \(buttonList))"))
    }
}

/// Why a board command was refused; ``message`` is what follows `error: `.
public struct BoardCommandError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Human-readable: what was wrong and what was expected.
    public var message: String
    /// Creates an error with `message`.
    public init(_ message: String) { self.message = message }
    /// `error: <message>`, the control-socket reply.
    public var description: String { "error: \(message)" }
}
