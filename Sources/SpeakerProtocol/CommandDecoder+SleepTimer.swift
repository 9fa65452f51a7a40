// SPDX-License-Identifier: Apache-2.0
extension CommandDecoder {
    /// Why a sleep-timer or mute command is malformed: its code and message.
    struct FieldProblem: Error {
        var code: CommandErrorCode
        var message: String
    }

    /// Decodes `setSleepTimer` (`minutes` 1–720, optional `fadeSeconds`
    /// 0–1800, both whole numbers), `cancelSleepTimer`, `mute` and `unmute`.
    static func decodeSleepTimerOrMute(_ action: CommandAction, _ value: JSONValue) -> Result<Command, FieldProblem> {
        switch action {
        case .cancelSleepTimer: return .success(.cancelSleepTimer)
        case .mute: return .success(.mute)
        case .unmute: return .success(.unmute)
        default: break
        }
        guard let field = value["minutes"] else { return .failure(FieldProblem(code: .malformed, message: "minutes: missing")) }
        guard let minutes = field.numberValue else {
            return .failure(FieldProblem(code: .malformed, message: "minutes: expected a number, got \(field.kindDescription)"))
        }
        guard minutes.isFinite, minutes == minutes.rounded(), (1...720).contains(minutes) else {
            return .failure(FieldProblem(code: .invalidValue, message: "minutes: must be a whole number from 1 to 720"))
        }
        var fadeSeconds: Int?
        if let fade = value["fadeSeconds"], fade != .null {
            guard let seconds = fade.numberValue else {
                return .failure(FieldProblem(code: .malformed, message: "fadeSeconds: expected a number, got \(fade.kindDescription)"))
            }
            guard seconds.isFinite, seconds == seconds.rounded(), (0...1800).contains(seconds) else {
                return .failure(FieldProblem(code: .invalidValue, message: "fadeSeconds: must be a whole number from 0 to 1800"))
            }
            fadeSeconds = Int(seconds)
        }
        return .success(.setSleepTimer(minutes: Int(minutes), fadeSeconds: fadeSeconds))
    }
}
