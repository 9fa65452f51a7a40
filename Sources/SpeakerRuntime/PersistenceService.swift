import SpeakerCore
import SpeakerSystem

/// The persistence seam: the state file (``StateStore``) and the revision
/// reservation (``RevisionStore``) in `stateDirectory`. Both are read before
/// the core exists (the core starts from them); while running this service
/// performs `saveState` and `reserveRevisions`, answering the latter with a
/// `.revisionReservation` action. Loop thread only.
public final class PersistenceService: SpeakerService {
    public let name = "persistence"
    public let stateStore: StateStore
    public let revisions: RevisionStore
    private let resumeOnBoot: Bool
    private weak var context: ServiceContext?

    public init(stateStore: StateStore, revisions: RevisionStore, resumeOnBoot: Bool) {
        self.stateStore = stateStore
        self.revisions = revisions
        self.resumeOnBoot = resumeOnBoot
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        stateStore.logConfiguration(resumeOnBoot: resumeOnBoot)
    }

    public func perform(_ effect: SpeakerEffect) -> Bool {
        switch effect {
        case .saveState(let persisted):
            stateStore.save(persisted)
        case .reserveRevisions(let through):
            guard let context else { return false }
            context.send(.revisionReservation(through: through, failure: revisions.reserve(through: through), at: context.now()))
        default:
            return false
        }
        return true
    }

    public func stop() { context = nil }
}
