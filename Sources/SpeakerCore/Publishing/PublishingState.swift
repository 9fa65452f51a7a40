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

    init(revision: RevisionCounter) { self.revision = revision }
}

/// What the publishing reducer needs to know of the other domains at one
/// publication: the state as it would be published.
struct PublicationView {
    var catalog: [CatalogEntry]
    /// The `device` payload without `problem` (which is this domain's).
    var device: DeviceDescriptor
    /// The `session` payload before device, revision and time are stamped.
    var session: SessionAttributes
    var topics: SpeakerTopics
    var wallClock: () -> WallClockReading
    var clockSynced: () -> Bool
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
        device.problem = sessionWithheld.map { "session not published: \($0)" }
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
    /// `device`, `catalog`, `session`, then `availability` = `online` last.
    func republishAll(_ topics: SpeakerTopics) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        if let device = publishedDevice { effects.append(.publish(retained(topics.device, device.serialized()))) }
        if let catalog = publishedCatalog { effects.append(.publish(retained(topics.catalog, CatalogEntry.serialized(catalog)))) }
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
        var session = view.session
        session.devices = [device]
        var previous = publishedSession
        previous?.revision = 0
        previous?.updatedAt = ""
        previous?.clockSynced = false
        if previous != session {
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
            PublicationStep.result(.accepted(id: $0.origin.id, revision: revision.current, level: $0.level), for: $0.origin)
        }
        return (results, publications)
    }

    private func retained(_ topic: String, _ payload: [UInt8]) -> Publication {
        Publication(topic: topic, payload: payload, qos: 1, retain: true)
    }
}
