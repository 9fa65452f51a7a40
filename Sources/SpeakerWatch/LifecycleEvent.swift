// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// One step of a remote media session's life, as a phone's surface needs it:
/// a session starts, changes, ends. Each is emitted exactly once per change
/// of the speaker's state (`Fleet`). Pure value; any thread.
public struct LifecycleEvent: Equatable, Sendable {
    public enum Kind: String, Equatable, Sendable {
        /// A new session id that plays or is about to (not `ended`).
        case start
        /// A later revision of the started session.
        case update
        /// The started session ended (`ended: true`), or was replaced without
        /// its end being seen (`inferred`).
        case end
    }

    public var kind: Kind
    public var deviceID: String
    /// The session's attributes as applied (for an inferred end: the last
    /// ones seen, with `ended` true and `isPlaying` false).
    public var session: SessionAttributes
    /// The payload as received (every member, additive ones included); for
    /// an inferred end, `session`'s own.
    public var json: JSONValue
    /// The end was not published as such: a new session (or a new epoch's)
    /// took the place of one whose `ended` was never seen.
    public var inferred: Bool

    public init(kind: Kind, deviceID: String, session: SessionAttributes, json: JSONValue, inferred: Bool = false) {
        self.kind = kind
        self.deviceID = deviceID
        self.session = session
        self.json = json
        self.inferred = inferred
    }

    /// The event as one JSON line (no newline):
    /// `{"event","device","epoch","session","at"}` (`inferred` only when true);
    /// `at` is the watcher's wall clock when it applied the message.
    public func jsonLine(at: String) -> [UInt8] {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("event"); w.string(kind.rawValue)
        w.key("device"); w.string(deviceID)
        w.key("epoch"); w.string(session.devices.first?.epoch)
        w.key("session"); w.value(json)
        w.key("at"); w.string(at)
        if inferred { w.key("inferred"); w.bool(true) }
        w.endObject()
        return w.bytes
    }
}
