/// The error codes a `command/result` can carry (mqtt-contract.md).
public enum CommandErrorCode: String, CaseIterable, Equatable, Sendable {
    case malformed
    case tooLarge = "too-large"
    case unknownAction = "unknown-action"
    case unknownSound = "unknown-sound"
    case invalidValue = "invalid-value"
    case unsupported
    case audioUnavailable = "audio-unavailable"
    /// The speaker cannot publish `session` (it cannot reserve revisions):
    /// the command was not applied (or, rarely, applied but not shown).
    case stateUnavailable = "state-unavailable"
}

/// Why a command was refused: a code and a human-readable message.
public struct CommandRejection: Error, Equatable, Sendable {
    /// The caller's id when it could be read, else nil (published as `null`).
    public var id: String?
    public var code: CommandErrorCode
    public var message: String

    public init(id: String?, code: CommandErrorCode, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }
}

/// The one `command/result` every command gets.
public enum CommandResult: Equatable, Sendable {
    /// Accepted and done; `level` is the level actually applied by a volume command.
    case accepted(id: String, revision: UInt64, level: Double?)
    case rejected(CommandRejection)

    /// The correlation id echoed in the result (nil when it could not be read).
    public var id: String? {
        switch self {
        case .accepted(let id, _, _): return id
        case .rejected(let r): return r.id
        }
    }

    public var json: JSONValue {
        switch self {
        case let .accepted(id, revision, level):
            var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("ok", .bool(true)), ("revision", .number(Double(revision)))]
            if let level { members.append(("level", .number(level))) }
            return .object(members)
        case .rejected(let r):
            return .object([
                ("id", r.id.map { .string($0) } ?? .null), ("ok", .bool(false)),
                ("error", .object([("code", .string(r.code.rawValue)), ("message", .string(r.message))])),
            ])
        }
    }
}

/// A physical input event, published on `event` for automations.
public enum InputEventPayload: Equatable, Sendable {
    case button(name: String, gesture: String)
    case knob(delta: Int)

    public var json: JSONValue {
        switch self {
        case let .button(name, gesture):
            return .object([("source", .string("button")), ("name", .string(name)), ("gesture", .string(gesture))])
        case .knob(let delta):
            return .object([("source", .string("knob")), ("delta", .number(Double(delta)))])
        }
    }
}
