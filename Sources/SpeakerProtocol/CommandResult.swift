// SPDX-License-Identifier: Apache-2.0
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
    /// A command the speaker held across a restart (its command journal)
    /// and did not apply: older than the journal's age bound, received
    /// before a clock step it cannot measure across, left in progress when
    /// the last process stopped, or beyond the journal's size bound.
    case expired
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
public enum CommandResult: Equatable, Sendable, JSONWritable {
    /// Accepted and done; `level` is the level actually applied by a volume
    /// command, `fadeSeconds` the fade a `setSleepTimer` applied.
    case accepted(id: String, revision: UInt64, level: Double?, fadeSeconds: Int? = nil)
    case rejected(CommandRejection)

    /// The correlation id echoed in the result (nil when it could not be read).
    public var id: String? {
        switch self {
        case .accepted(let id, _, _, _): return id
        case .rejected(let r): return r.id
        }
    }

    /// Writes the payload, keys in contract order (`level` and `fadeSeconds` only when there is one).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case let .accepted(id, revision, level, fadeSeconds):
            w.key("id"); w.string(id)
            w.key("ok"); w.bool(true)
            w.key("revision"); w.number(Double(revision))
            if let level { w.key("level"); w.number(level) }
            if let fadeSeconds { w.key("fadeSeconds"); w.number(Double(fadeSeconds)) }
        case .rejected(let r):
            w.key("id"); w.string(r.id)
            w.key("ok"); w.bool(false)
            w.key("error")
            w.beginObject()
            w.key("code"); w.string(r.code.rawValue)
            w.key("message"); w.string(r.message)
            w.endObject()
        }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 96 }
}

/// A physical input event, published on `event` for automations.
public enum InputEventPayload: Equatable, Sendable, JSONWritable {
    case button(name: String, gesture: String)
    case knob(delta: Int)

    /// Writes the payload, keys in contract order.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case let .button(name, gesture):
            w.key("source"); w.string("button")
            w.key("name"); w.string(name)
            w.key("gesture"); w.string(gesture)
        case .knob(let delta):
            w.key("source"); w.string("knob")
            w.key("delta"); w.number(Double(delta))
        }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 96 }
}
