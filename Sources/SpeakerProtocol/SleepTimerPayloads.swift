// SPDX-License-Identifier: Apache-2.0
/// `session.sleepTimer` while a sleep timer runs (mqtt-contract.md, "Sleep
/// timer and mute"). `remainingSeconds` is measured on the speaker's
/// monotonic clock as of the session's `updatedAt`, so a reader whose clock
/// is wrong can still count down; `endsAt` is the speaker's wall clock when
/// the timer was set plus its length.
public struct SleepTimerAttributes: Equatable, Sendable, JSONWritable, Codable {
    /// ISO 8601 UTC with milliseconds.
    public var endsAt: String
    /// The timer's length as set.
    public var minutes: Int
    /// The fade-out that ends it (clamped to the timer's length).
    public var fadeSeconds: Int
    /// Whole seconds left, rounded up.
    public var remainingSeconds: Int
    /// True once the fade-out has begun.
    public var fading: Bool

    public init(endsAt: String, minutes: Int, fadeSeconds: Int, remainingSeconds: Int, fading: Bool) {
        self.endsAt = endsAt
        self.minutes = minutes
        self.fadeSeconds = fadeSeconds
        self.remainingSeconds = remainingSeconds
        self.fading = fading
    }

    /// Writes the object, keys in contract order.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("endsAt"); w.string(endsAt)
        w.key("minutes"); w.number(Double(minutes))
        w.key("fadeSeconds"); w.number(Double(fadeSeconds))
        w.key("remainingSeconds"); w.number(Double(remainingSeconds))
        w.key("fading"); w.bool(fading)
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 112 }
}

/// A speaker event that is not a physical input, published on `event`:
/// `{"source":"sleepTimer","name":"ended"}` when a sleep timer runs out.
public enum SpeakerEventPayload: Equatable, Sendable, JSONWritable {
    case sleepTimerEnded

    /// Writes the payload, keys in contract order.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case .sleepTimerEnded:
            w.key("source"); w.string("sleepTimer")
            w.key("name"); w.string("ended")
        }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 48 }
}
