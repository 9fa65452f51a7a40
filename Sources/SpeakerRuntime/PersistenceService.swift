// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerPorts

/// The persistence seam: the state file (``StateStorage``) and the revision
/// reservation (``RevisionStorage``) in `stateDirectory`. Both are read before
/// the core exists (the core starts from them); while running this service
/// performs `saveState` and `reserveRevisions`, answering the latter with a
/// `.revisionReservation` action. Loop thread only.
public final class PersistenceService: SpeakerService {
    public let name = "persistence"
    private let stateStore: any StateStorage
    private let revisions: any RevisionStorage
    private let mixStore: (any MixStorage)?
    private let journal: (any CommandJournalStorage)?
    private let resumeOnBoot: Bool
    private weak var context: ServiceContext?

    /// `mixStore`: where the mixes changed over MQTT are kept (nil: not kept);
    /// `journal`: where the command journal is kept (nil: not kept).
    public init(stateStore: any StateStorage, revisions: any RevisionStorage, resumeOnBoot: Bool,
                mixStore: (any MixStorage)? = nil, journal: (any CommandJournalStorage)? = nil) {
        self.stateStore = stateStore
        self.mixStore = mixStore
        self.journal = journal
        self.revisions = revisions
        self.resumeOnBoot = resumeOnBoot
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        stateStore.logConfiguration(resumeOnBoot: resumeOnBoot)
    }

    /// `.saveState`: writes the state.
    func save(_ state: PersistedState) {
        stateStore.save(state)
    }

    /// `.saveMixes`: writes the mixes at once.
    func save(_ mixes: SavedMixes) {
        mixStore?.save(mixes)
    }

    /// `.saveJournal`: writes the command journal at once.
    func save(_ journal: CommandJournal) {
        self.journal?.save(journal)
    }

    /// `.reserveRevisions`: records the reservation, then answers the core.
    func reserveRevisions(through: UInt64) {
        guard let context else { return }
        context.send(.revisionReservation(through: through, failure: revisions.reserve(through: through), at: context.now()))
    }

    public func stop() { context = nil }
}
