// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// Why a command sent through a watcher did not succeed.
public enum CommandFailure: Error, Equatable, Sendable {
    /// The speaker refused it: the contract's code and its message.
    case rejected(code: CommandErrorCode, message: String)
    /// No result within the timeout (`resultSeen` false), or a good result
    /// whose session did not arrive in time (`resultSeen` true).
    case timedOut(resultSeen: Bool)
    /// The speaker's revision counter started over (a new epoch) before the
    /// session the result named arrived: that revision means nothing now.
    case speakerStartedOver
    /// Another command with this id is still waiting (ids must be unique).
    case duplicateID(String)
    /// Not a device id of the contract.
    case invalidDevice(String)
    /// The message could not be handed to the broker (not connected).
    case notSent
}

/// A good result and the session that shows it.
public struct CommandSuccess: Equatable, Sendable {
    /// The result's `revision`; `level` and `fadeSeconds` when the speaker sent them.
    public var revision: UInt64
    public var level: Double?
    public var fadeSeconds: Int?
    /// The session applied with that revision (or a later one, when the
    /// watcher had already applied a later one when the result arrived).
    public var session: SessionAttributes
}

/// The end of one command.
public struct CommandCompletion: Equatable, Sendable {
    public var id: String
    public var deviceID: String
    public var outcome: Result<CommandSuccess, CommandFailure>
}

/// The commands waiting for their result, then for their session. Pure;
/// owned by `Fleet`.
struct CommandLedger: Equatable, Sendable {
    struct Pending: Equatable, Sendable {
        var id: String
        var deviceID: String
        var deadline: UInt64
        /// Set by a good result: what it said, and the epoch it was numbered
        /// in (`epochKnown` false when no session had been applied yet: the
        /// first one applied then names it).
        var accepted: (revision: UInt64, level: Double?, fadeSeconds: Int?, epoch: String?, epochKnown: Bool)?

        static func == (a: Pending, b: Pending) -> Bool {
            a.id == b.id && a.deviceID == b.deviceID && a.deadline == b.deadline
                && a.accepted?.revision == b.accepted?.revision && a.accepted?.epoch == b.accepted?.epoch
        }
    }

    private(set) var pending: [Pending] = []

    var nextDeadline: UInt64? { pending.map(\.deadline).min() }

    /// False when a command with this id is already waiting.
    mutating func register(id: String, deviceID: String, deadline: UInt64) -> Bool {
        guard !pending.contains(where: { $0.id == id }) else { return false }
        pending.append(Pending(id: id, deviceID: deviceID, deadline: deadline))
        return true
    }

    mutating func abandon(id: String, deviceID: String) -> CommandCompletion? {
        guard let index = pending.firstIndex(where: { $0.id == id && $0.deviceID == deviceID }) else { return nil }
        pending.remove(at: index)
        return CommandCompletion(id: id, deviceID: deviceID, outcome: .failure(.notSent))
    }

    /// A `command/result` of `speaker`: a refusal completes its command; a
    /// good one completes it at once if the session it names is already
    /// applied, else waits for it. A result nobody waits for (another
    /// client's, or a duplicate) is ignored.
    mutating func resultArrived(_ result: CommandResult, from speaker: FollowedSpeaker, now: UInt64) -> [CommandCompletion] {
        guard let id = result.id,
              let index = pending.firstIndex(where: { $0.id == id && $0.deviceID == speaker.deviceID && $0.accepted == nil }) else {
            return []
        }
        switch result {
        case .rejected(let rejection):
            pending.remove(at: index)
            return [CommandCompletion(id: id, deviceID: speaker.deviceID,
                                      outcome: .failure(.rejected(code: rejection.code, message: rejection.message)))]
        case let .accepted(_, revision, level, fadeSeconds):
            pending[index].accepted = (revision, level, fadeSeconds, speaker.epoch, speaker.watermark != nil)
            return sessionApplied(speaker, now: now)
        }
    }

    /// After `speaker` applied a session: completes the commands whose
    /// revision it reaches; fails those numbered in an epoch it has left.
    mutating func sessionApplied(_ speaker: FollowedSpeaker, now: UInt64) -> [CommandCompletion] {
        guard let session = speaker.session, let watermark = speaker.watermark else { return [] }
        var done: [CommandCompletion] = []
        pending.removeAll { item in
            guard item.deviceID == speaker.deviceID, let accepted = item.accepted else { return false }
            if accepted.epochKnown && accepted.epoch != speaker.epoch {
                done.append(CommandCompletion(id: item.id, deviceID: item.deviceID, outcome: .failure(.speakerStartedOver)))
                return true
            }
            guard watermark >= accepted.revision else { return false }
            let success = CommandSuccess(revision: accepted.revision, level: accepted.level, fadeSeconds: accepted.fadeSeconds,
                                         session: session)
            done.append(CommandCompletion(id: item.id, deviceID: item.deviceID, outcome: .success(success)))
            return true
        }
        return done
    }

    /// Fails every command whose deadline is at or before `now`.
    mutating func expire(now: UInt64) -> [CommandCompletion] {
        var done: [CommandCompletion] = []
        pending.removeAll { item in
            guard item.deadline <= now else { return false }
            done.append(CommandCompletion(id: item.id, deviceID: item.deviceID,
                                          outcome: .failure(.timedOut(resultSeen: item.accepted != nil))))
            return true
        }
        return done
    }
}
