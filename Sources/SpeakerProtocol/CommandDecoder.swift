// SPDX-License-Identifier: Apache-2.0
/// Turns a raw `command` payload into a `CommandEnvelope` or a precise
/// `CommandRejection` (mqtt-contract.md, "command"). Never traps on any input.
///
/// Unknown extra members are ignored (forward compatibility); members an
/// action does not use are ignored. Pure; any thread.
public struct CommandDecoder: Sendable {
    /// Payloads larger than this are rejected unparsed with `too-large`.
    public static let maxPayloadBytes = 4096

    public init() {}

    public func decode(_ payload: [UInt8]) -> Result<CommandEnvelope, CommandRejection> {
        guard payload.count <= Self.maxPayloadBytes else {
            return .failure(.init(id: nil, code: .tooLarge,
                                  message: "payload is \(payload.count) bytes; the limit is \(Self.maxPayloadBytes)"))
        }
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: 16, allowNonFiniteLiterals: true).parse(payload)
        } catch {
            return .failure(.init(id: nil, code: .malformed, message: "not JSON: \(error)"))
        }
        guard case .object = value else {
            return .failure(.init(id: nil, code: .malformed, message: "expected a JSON object, got \(value.kindDescription)"))
        }
        let id: String
        switch value["id"] {
        case .string(let s)? where Self.isValidID(s): id = s
        case .string?:
            return .failure(.init(id: nil, code: .malformed, message: "id: must be 1-64 printable ASCII characters"))
        case nil:
            return .failure(.init(id: nil, code: .malformed, message: "id: missing"))
        case let other?:
            return .failure(.init(id: nil, code: .malformed, message: "id: expected a string, got \(other.kindDescription)"))
        }
        func reject(_ code: CommandErrorCode, _ message: String) -> Result<CommandEnvelope, CommandRejection> {
            .failure(.init(id: id, code: code, message: message))
        }
        guard let actionValue = value["action"] else { return reject(.malformed, "action: missing") }
        guard let actionName = actionValue.stringValue else {
            return reject(.malformed, "action: expected a string, got \(actionValue.kindDescription)")
        }
        guard let action = CommandAction(rawValue: actionName) else {
            return reject(.unknownAction, "action: unknown action \"\(actionName)\"; expected one of "
                          + CommandAction.allCases.map(\.rawValue).joined(separator: ", "))
        }
        let command: Command
        switch action {
        case .play: command = .play
        case .pause: command = .pause
        case .toggle: command = .toggle
        case .stop: command = .stop
        case .next: command = .next
        case .previous: command = .previous
        case .select:
            guard let field = value["soundID"] else { return reject(.malformed, "soundID: missing") }
            guard let sound = field.stringValue else {
                return reject(.malformed, "soundID: expected a string, got \(field.kindDescription)")
            }
            command = .select(soundID: sound)
        case .setVolume:
            guard let field = value["level"] else { return reject(.malformed, "level: missing") }
            guard let level = field.numberValue else {
                return reject(.malformed, "level: expected a number, got \(field.kindDescription)")
            }
            guard level.isFinite else { return reject(.invalidValue, "level: must be a finite number") }
            command = .setVolume(level: level)
        case .volumeUp, .volumeDown:
            var steps = 1
            if let field = value["steps"], field != .null {
                guard let n = field.numberValue else {
                    return reject(.malformed, "steps: expected a number, got \(field.kindDescription)")
                }
                guard n.isFinite, n == n.rounded(), n >= 1, n <= 20 else {
                    return reject(.invalidValue, "steps: must be a whole number from 1 to 20")
                }
                steps = Int(n)
            }
            command = action == .volumeUp ? .volumeUp(steps: steps) : .volumeDown(steps: steps)
        }
        return .success(CommandEnvelope(id: id, command: command))
    }

    /// 1–64 printable ASCII characters.
    public static func isValidID(_ s: String) -> Bool {
        let bytes = s.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }
}
