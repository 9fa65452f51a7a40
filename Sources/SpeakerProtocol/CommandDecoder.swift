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
        case .setSleepTimer, .cancelSleepTimer, .mute, .unmute:
            switch Self.decodeSleepTimerOrMute(action, value) {
            case .success(let decoded): command = decoded
            case .failure(let problem): return reject(problem.code, problem.message)
            }
        case .setSchedules:
            guard let field = value["schedules"] else { return reject(.malformed, "schedules: missing") }
            guard field.isFiniteThroughout else { return reject(.invalidValue, "schedules: numbers must be finite") }
            command = .setSchedules(field)
        case .setScheduleEnabled:
            guard let field = value["index"] else { return reject(.malformed, "index: missing") }
            guard let n = field.numberValue else { return reject(.malformed, "index: expected a number, got \(field.kindDescription)") }
            guard n.isFinite, n == n.rounded(), n >= 0, n < 1000 else {
                return reject(.invalidValue, "index: must be a whole number from 0")
            }
            guard let flag = value["enabled"] else { return reject(.malformed, "enabled: missing") }
            guard let enabled = flag.boolValue else { return reject(.malformed, "enabled: expected true or false, got \(flag.kindDescription)") }
            command = .setScheduleEnabled(index: Int(n), enabled: enabled)
        case .setNightCap:
            guard let field = value["nightCap"] else { return reject(.malformed, "nightCap: missing") }
            guard field.isFiniteThroughout else { return reject(.invalidValue, "nightCap: numbers must be finite") }
            command = .setNightCap(field)
        case .saveMix:
            switch MixDefinition.decode(value, idKey: "mixID") {
            case .success(let mix): command = .saveMix(mix)
            case .failure(let error): return reject(error.malformed ? .malformed : .invalidValue, error.description)
            }
        case .deleteMix:
            guard let field = value["mixID"] else { return reject(.malformed, "mixID: missing") }
            guard let mixID = field.stringValue else {
                return reject(.malformed, "mixID: expected a string, got \(field.kindDescription)")
            }
            command = .deleteMix(mixID: mixID)
        case .setLayerLevel:
            guard let field = value["soundID"] else { return reject(.malformed, "soundID: missing") }
            guard let sound = field.stringValue else {
                return reject(.malformed, "soundID: expected a string, got \(field.kindDescription)")
            }
            guard let levelField = value["level"] else { return reject(.malformed, "level: missing") }
            guard let level = levelField.numberValue else {
                return reject(.malformed, "level: expected a number, got \(levelField.kindDescription)")
            }
            guard level.isFinite, level >= 0, level <= 1 else {
                return reject(.invalidValue, "level: must be a number in [0, 1], got \(levelField.jsonText)")
            }
            command = .setLayerLevel(soundID: sound, level: level)
        }
        return .success(CommandEnvelope(id: id, command: command))
    }

    /// 1–64 printable ASCII characters.
    public static func isValidID(_ s: String) -> Bool {
        let bytes = s.utf8
        return (1...64).contains(bytes.count) && bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }
}

extension JSONValue {
    /// No NaN or infinity anywhere inside (JSON cannot carry them back out).
    var isFiniteThroughout: Bool {
        switch self {
        case .number(let n): return n.isFinite
        case .array(let items): return items.allSatisfy(\.isFiniteThroughout)
        case .object(let members): return members.allSatisfy { $0.value.isFiniteThroughout }
        case .null, .bool, .string: return true
        }
    }
}
