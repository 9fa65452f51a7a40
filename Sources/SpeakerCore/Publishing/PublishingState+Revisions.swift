// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What the speaker does about revision reservations (the absolute
/// invariant: a subscriber never sees a `session` revision that is not
/// greater than every one it saw before, across restarts, power cuts and
/// disk faults).
///
/// A revision is published only once its reservation is confirmed durable
/// (`.revisionReservation` answers `.reserveRevisions`). When the
/// reservation cannot be written (read-only or full state directory), the
/// stored one cannot be read, or the revision space is used up, `session` is
/// withheld: the reason is logged once, shown in `device.problem` and the
/// systemd status; remote commands are refused with `state-unavailable`
/// (they would change state nobody can be shown); buttons and the knob keep
/// working. A failed reservation is retried every `reservationRetryMs`;
/// publishing resumes, with a fresh revision, when one succeeds.
extension PublishingState {
    /// How long after a failed reservation it is tried again.
    public static let reservationRetryMs = 5_000

    /// The runner's answer to `.reserveRevisions(through:)`.
    mutating func handleReservation(through: UInt64, failure: String?, at now: MonotonicInstant) -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        if let failure {
            revision.reservationFailed(through: through, reason: failure)
            reservationFailures += 1
            let left = revision.reservedThrough - min(revision.current, revision.reservedThrough)
            if reservationFailures == 1 && left > 0 {
                effects.append(.log(.warning, "cannot reserve session revisions through \(through): \(failure); "
                                    + "\(left) reserved revisions left, then session publishing stops; retrying every "
                                    + "\(Self.reservationRetryMs / 1000) s"))
            } else {
                effects.append(.log(.debug, "revision reservation through \(through) failed: \(failure)"))
            }
            reservationRetryAt = now.advanced(byMilliseconds: Self.reservationRetryMs)
        } else {
            revision.reserved(through: through)
            if reservationFailures > 0 && sessionWithheld == nil {
                effects.append(.log(.notice, "revisions reserved through \(through) again"))
            }
            reservationFailures = 0
            reservationRetryAt = nil
        }
        return effects
    }

    /// Asks for the next block of revisions when it is due (`RevisionCounter.reservationDue()`).
    mutating func reserveRevisionsIfDue() -> [SpeakerEffect] {
        revision.reservationDue().map { [.reserveRevisions(through: $0)] } ?? []
    }

    /// On a tick: tries a failed reservation again when its retry is due.
    mutating func retryReservationIfDue(at now: MonotonicInstant) -> [SpeakerEffect] {
        guard let due = reservationRetryAt, due <= now else { return [] }
        reservationRetryAt = nil
        return revision.retry().map { [.reserveRevisions(through: $0)] } ?? []
    }

    /// Keeps `sessionWithheld` in step with the counter, logging each change
    /// once: withheld as soon as no revision can be handed out; resumed only
    /// when a reservation is confirmed (not while a retry is on its way).
    mutating func noteRevisionStanding() -> [SpeakerEffect] {
        var effects: [SpeakerEffect] = []
        let reason = revision.unavailableReason
        switch (sessionWithheld, reason) {
        case (nil, let reason?):
            sessionWithheld = reason
            let retry = if case .failed = revision.standing {
                "; retrying every \(Self.reservationRetryMs / 1000) s"
            } else {
                "; it stays stopped until this is fixed and the speaker restarted"
            }
            effects.append(.log(.error, "session publishing stopped: \(reason) — publishing more could repeat a revision "
                                + "a subscriber has already seen\(retry); remote commands are refused (state-unavailable)"))
        case (let old?, let reason?) where old != reason:
            sessionWithheld = reason
        case (.some, nil) where revision.standing == .reserved:
            sessionWithheld = nil
            effects.append(.log(.notice, "session publishing resumed: revisions reserved through \(revision.reservedThrough)"))
        default:
            break
        }
        return effects
    }

    /// Answers results that were waiting for a `session` that cannot be
    /// published: the change was made, but no revision shows it.
    mutating func answerWithheldResults(_ reason: String) -> [PublicationStep] {
        let waiting = resultsAwaitingPublish
        resultsAwaitingPublish = []
        return waiting.map {
            .result(.rejected(CommandRejection(id: $0.origin.id, code: .stateUnavailable,
                                               message: "done, but session state cannot be published: \(reason)")), for: $0.origin)
        }
    }

    /// Refuses a remote command while `session` is withheld (nil when it may run).
    var withheldRejection: (CommandErrorCode, String)? {
        sessionWithheld.map { (.stateUnavailable, "session state cannot be published: \($0)") }
    }
}
