// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The publishing domain: the revision counter and its reservations, what
/// was last published (so only real changes publish and bump the revision),
/// and the accepted commands whose results wait for the publication that
/// shows their change. Its reducers are here and in `PublishingState+Revisions`.
public struct PublishingState: Equatable, Sendable {
    public var revision: RevisionCounter
    /// Why `session` is not being published (revisions cannot be reserved),
    /// or nil while it is. Shown in `device.problem`, the log and `STATUS=`.
    public var sessionWithheld: String?
    /// When a failed revision reservation is tried again.
    public var reservationRetryAt: MonotonicInstant?
    /// Reservations failed in a row (the first is logged as a warning).
    public var reservationFailures = 0
    /// Accepted commands waiting for the publication that shows their change.
    var resultsAwaitingPublish: [AwaitingResult] = []
    var publishedDevice: DeviceDescriptor?
    var publishedSession: SessionAttributes?
    var publishedCatalog: [CatalogEntry]?
    /// The images last published on `artwork/{id}`, by entry id.
    var publishedArtwork: [String: [UInt8]] = [:]
    var publishedSchedules: SchedulesSnapshot?

    init(revision: RevisionCounter) { self.revision = revision }
}

/// What the publishing reducer needs to know of the other domains at one
/// publication: the state as it would be published.
struct PublicationView {
    /// The catalog as published (each entry saying whether it has artwork).
    var catalog: [CatalogEntry]
    /// The images, which decide what `artwork/{id}` carries.
    var artwork: ArtworkState
    /// The `device` payload without `problem` (which is this domain's).
    var device: DeviceDescriptor
    /// The `session` payload before device, revision and time are stamped.
    var session: SessionAttributes
    var topics: SpeakerTopics
    var wallClock: () -> WallClockReading
    var clockSynced: () -> Bool
    /// What the retained `schedules` topic shows.
    var schedule: SchedulesSnapshot
}

/// The part of the schedule domain the `schedules` topic shows: published
/// again only when it changes.
struct SchedulesSnapshot: Equatable {
    var rules: [ScheduleRule]
    var synced: Bool
    var next: ScheduleState.NextFire?

    init(_ schedule: ScheduleState) {
        rules = schedule.rules
        synced = schedule.synced
        next = schedule.next
    }

    var payload: [UInt8] {
        var state = ScheduleState()
        state.rules = rules
        state.synced = synced
        state.next = next
        return state.payload { WallClockReading(seconds: $0, milliseconds: 0).iso8601 }
    }
}

/// One step of a publication, in the order it must be sent: a command's
/// result (which the command ledger records and sends), a new `session`
/// publication (which the broker's health also remembers, to recognise its
/// own retained state), or any other effect.
enum PublicationStep: Equatable {
    case result(CommandResult, for: PendingCommand)
    case session(Publication)
    case effect(SpeakerEffect)
}

extension PublishingState {
    /// `view.device` with the problem this domain knows of.
    private func device(_ view: PublicationView) -> DeviceDescriptor {
        var device = view.device
        device.problem = sessionWithheld.map { "session not published: \($0)" } ?? view.device.problem
        return device
    }

    /// Publishes whatever changed since the last publication, in this order:
    /// 1. the withholding of `session` noted (logged once);
    /// 2. the results of the commands the change completes, ahead of the
    ///    state they name — MQTT orders messages only within one topic, so a
    ///    reader ties a result to its `session` by the `revision` anyway, and
    ///    an answer ahead of the state reaches its caller sooner;
    /// 3. `catalog`, `device`, and `session` with a new revision, each only if
    ///    it changed; `session` waits while its revision's reservation is
    ///    being written and is withheld while none can be made;
    /// 4. the next revision reservation, when due;
    /// 5. the withholding noted again — the last reserved revision may just
    ///    have gone out — and `device` re-published when that changed its
    ///    problem, so the next command is refused before it changes anything.
    /// Nothing is published while the engine has requests outstanding (a
    /// published state is one the engine has reached): `view` is then nil,
    /// and only the revision steps run.
    mutating func publishChanges(_ view: PublicationView?) -> [PublicationStep] {
        var steps = noteRevisionStanding().map(PublicationStep.effect)
        if let view {
            let (results, publications) = publishPending(view)
            steps += results + publications
        }
        steps += reserveRevisionsIfDue().map(PublicationStep.effect)
        let withheld = sessionWithheld
        steps += noteRevisionStanding().map(PublicationStep.effect)
        if withheld != sessionWithheld, let view {
            let device = device(view)
            publishedDevice = device
            steps.append(.effect(.publish(retained(view.topics.device, device.serialized()))))
        }
        return steps
    }

    /// After a (re)connect, once the Home Assistant discovery config (or its
    /// removal) has gone out: the complete picture in contract order —
    /// `device`, the artwork images, `catalog`, `schedules`, `session`, then
    /// `availability` = `online` last.
    func republishAll(_ topics: SpeakerTopics) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        if let device = publishedDevice { effects.append(.publish(retained(topics.device, device.serialized()))) }
        for id in publishedArtwork.keys.sorted() {
            effects.append(.publish(retained(topics.artwork(id), publishedArtwork[id] ?? [])))
        }
        if let catalog = publishedCatalog { effects.append(.publish(retained(topics.catalog, CatalogEntry.serialized(catalog)))) }
        if let schedules = publishedSchedules { effects.append(.publish(retained(topics.schedules, schedules.payload))) }
        if let session = publishedSession { effects.append(.publish(retained(topics.session, session.serialized()))) }
        effects.append(.publish(Publication(topic: topics.availability, payload: SpeakerTopics.online, qos: 1, retain: true)))
        return effects
    }

    /// The results that wait for this publication and the state publications
    /// of the change (steps 2 and 3 of `publishChanges`).
    private mutating func publishPending(_ view: PublicationView) -> (results: [PublicationStep], state: [PublicationStep]) {
        var publications: [PublicationStep] = []
        if publishedCatalog != view.catalog {
            publishedCatalog = view.catalog
            publications += publishArtwork(view).map(PublicationStep.effect)
            publications.append(.effect(.publish(retained(view.topics.catalog, CatalogEntry.serialized(view.catalog)))))
        }
        let device = device(view)
        var deviceBytes: [UInt8]?
        if publishedDevice != device {
            publishedDevice = device
            let bytes = device.serialized()
            deviceBytes = bytes
            publications.append(.effect(.publish(retained(view.topics.device, bytes))))
        }
        if publishedSchedules != view.schedule {
            publishedSchedules = view.schedule
            publications.append(.effect(.publish(retained(view.topics.schedules, view.schedule.payload))))
        }
        var session = view.session
        session.devices = [device]
        var previous = publishedSession
        previous?.revision = 0
        previous?.updatedAt = ""
        previous?.clockSynced = false
        previous?.sleepTimer?.remainingSeconds = 0
        var compared = session
        compared.sleepTimer?.remainingSeconds = 0  // counts down by itself: not a change
        if previous != compared {
            switch revision.next() {
            case .revision(let next):
                session.revision = next
            case .waiting:
                return ([], publications)  // the results go out with the session once the reservation is confirmed
            case .unavailable(let reason):
                return (answerWithheldResults(reason), publications)
            }
            session.updatedAt = view.wallClock().iso8601
            session.clockSynced = view.clockSynced()
            publishedSession = session
            // The device part is the same descriptor: its bytes are copied.
            publications.append(.session(retained(view.topics.session, session.serialized(writtenDevice: deviceBytes))))
        }
        let ready = resultsAwaitingPublish
        resultsAwaitingPublish = []
        let results = ready.map {
            PublicationStep.result(.accepted(id: $0.origin.id, revision: revision.current, level: $0.level,
                                             fadeSeconds: $0.fadeSeconds), for: $0.origin)
        }
        return (results, publications)
    }

    /// With a changed catalog, ahead of it (so an entry that says `artwork`
    /// has its image): each entry's image that is new or changed, and an
    /// empty retained payload for an entry that has none any more (a mix
    /// deleted), which clears the broker's copy.
    private mutating func publishArtwork(_ view: PublicationView) -> [SpeakerEffect] {
        let wanted = view.artwork.published(for: view.catalog)
        guard !wanted.isEmpty || !publishedArtwork.isEmpty else { return [] }
        var effects: [SpeakerEffect] = []
        for id in wanted.keys.sorted() where publishedArtwork[id] != wanted[id] {
            effects.append(.publish(retained(view.topics.artwork(id), wanted[id] ?? [])))
        }
        for id in publishedArtwork.keys.sorted() where wanted[id] == nil {
            effects.append(.publish(retained(view.topics.artwork(id), [])))
        }
        publishedArtwork = wanted
        return effects
    }

    private func retained(_ topic: String, _ payload: [UInt8]) -> Publication {
        Publication(topic: topic, payload: payload, qos: 1, retain: true)
    }
}
