import SpeakerCore
import SpeakerSystem

/// The effect runner: the one place where core effects become adapter calls
/// (each seam's `perform` overload lives in its own file).
extension SpeakerRuntime {
    func perform(_ effect: SpeakerEffect) {
        switch effect {
        case .audio(let request): perform(request)
        case .amp(let pulse): perform(pulse)
        case .publish(let publication): perform(publication)
        case .reserveRevisions(let through):
            // The ticket's answer, dispatched by `dispatch` after this action's effects.
            followUps.append(.revisionReservation(through: through, failure: revisions.reserve(through: through), at: now()))
        case .saveState(let persisted): stateStore.save(persisted)
        case let .log(level, message): logger.log(level.systemLevel, message)
        }
    }
}

extension CoreLogLevel {
    var systemLevel: LogLevel {
        switch self {
        case .error: return .error
        case .warning: return .warning
        case .notice: return .notice
        case .info: return .info
        case .debug: return .debug
        }
    }
}
