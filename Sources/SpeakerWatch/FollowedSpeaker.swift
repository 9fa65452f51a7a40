// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What a watcher knows of one speaker, kept by the contract's rules, and
/// the session lifecycle drawn from it. Pure value; owned by `Fleet`.
///
/// - `session`: applied only when its revision is greater than the last one
///   applied *in the same epoch* (`devices[0].epoch`). A session of another
///   epoch starts a new watermark, unless that epoch is one the speaker has
///   left (a late or stale retained message of a counter that started over).
/// - `device`: the latest `device` payload (it carries no revision), unless
///   it belongs to a left epoch; `session.devices[0]` is the same descriptor
///   as of that revision.
/// - `catalog`, `online`: the latest seen.
public struct FollowedSpeaker: Equatable, Sendable {
    public let deviceID: String
    public private(set) var device: DeviceDescriptor?
    public private(set) var catalog: [CatalogEntry]?
    /// The last session applied, and its payload as received.
    public private(set) var session: SessionAttributes?
    public private(set) var sessionJSON: JSONValue?
    /// `availability`: true after `online`, false after `offline` (the will), nil before either.
    public private(set) var online: Bool?
    /// The epoch the revision watermark belongs to (nil: a speaker that predates epochs).
    public private(set) var epoch: String?
    /// The revision of the last session applied in `epoch`.
    public private(set) var watermark: UInt64?
    /// The epochs this speaker has left, newest last (at most `retiredLimit`).
    public private(set) var retiredEpochs: [String?] = []
    /// The id of the session that has started and not yet ended, if any.
    public private(set) var startedSessionID: String?

    static let retiredLimit = 8

    public init(deviceID: String) { self.deviceID = deviceID }

    /// Why a `session` was not applied.
    public enum Stale: Equatable, Sendable {
        /// Its revision is not greater than `applied`, in the same epoch.
        case revision(received: UInt64, applied: UInt64)
        /// It belongs to an epoch the speaker has left.
        case leftEpoch(String?)
    }

    /// Applies a `session` by the contract's rules; returns the lifecycle
    /// events it makes (in order), or why it was dropped.
    mutating func apply(session new: SessionAttributes, json: JSONValue) -> Result<[LifecycleEvent], StaleSession> {
        let newEpoch = new.devices.first?.epoch
        if watermark != nil && newEpoch != epoch {
            if retiredEpochs.contains(newEpoch) { return .failure(StaleSession(reason: .leftEpoch(newEpoch))) }
            retiredEpochs = Array((retiredEpochs + [epoch]).suffix(Self.retiredLimit))
            watermark = nil  // it belonged to the counter that started over
        }
        if let applied = watermark, new.revision <= applied {
            return .failure(StaleSession(reason: .revision(received: new.revision, applied: applied)))
        }
        let previous = session
        epoch = newEpoch
        watermark = new.revision
        session = new
        sessionJSON = json
        if let descriptor = new.devices.first { device = descriptor }
        return .success(lifecycle(previous: previous, new: new, json: json))
    }

    /// The events from the started session (if any) to `new`.
    private mutating func lifecycle(previous: SessionAttributes?, new: SessionAttributes, json: JSONValue) -> [LifecycleEvent] {
        var events: [LifecycleEvent] = []
        let live = new.id != nil && !new.ended
        if let started = startedSessionID, started != new.id {
            // The started session was replaced without its end being seen.
            if var last = previous, last.id == started {
                last.ended = true
                last.isPlaying = false
                events.append(LifecycleEvent(kind: .end, deviceID: deviceID, session: last, json: last.json, inferred: true))
            }
            startedSessionID = nil
        }
        if startedSessionID == nil {
            if live {
                startedSessionID = new.id
                events.append(LifecycleEvent(kind: .start, deviceID: deviceID, session: new, json: json))
            }
        } else if new.ended {
            startedSessionID = nil
            events.append(LifecycleEvent(kind: .end, deviceID: deviceID, session: new, json: json))
        } else {
            events.append(LifecycleEvent(kind: .update, deviceID: deviceID, session: new, json: json))
        }
        return events
    }

    /// Takes a `device` payload; false (not taken) when it belongs to a left epoch.
    mutating func take(device new: DeviceDescriptor) -> Bool {
        guard !retiredEpochs.contains(new.epoch) || new.epoch == epoch else { return false }
        device = new
        return true
    }

    mutating func take(catalog new: [CatalogEntry]) { catalog = new }

    mutating func take(online new: Bool) { online = new }
}

/// A `session` that was not applied, and why.
public struct StaleSession: Error, Equatable, Sendable {
    public var reason: FollowedSpeaker.Stale
    public init(reason: FollowedSpeaker.Stale) { self.reason = reason }
}
