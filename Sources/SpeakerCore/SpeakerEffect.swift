// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// One MQTT publication the core wants sent.
public struct Publication: Equatable, Sendable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    /// MQTT v5 correlation data, for replies on a caller's response topic.
    public var correlationData: [UInt8]?
    /// The write policy: true when this publication, and whatever was queued
    /// before it in the same dispatch, should leave at once in a segment of its
    /// own rather than with the rest at the end of the dispatch. The core sets
    /// it on a command's result, which it emits just ahead of the `device` and
    /// `session` it names, so the broker forwards the answer before it stores
    /// and fans out the state.
    public var deliverNow: Bool
    /// Set on a command's result on `command/result`: the id of the command
    /// it answers. The MQTT service reports when the broker has acknowledged
    /// it (`.resultsDelivered`); until then the result is owed (journaled).
    public var resultID: String?

    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool, correlationData: [UInt8]? = nil,
                deliverNow: Bool = false, resultID: String? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.correlationData = correlationData
        self.deliverNow = deliverNow
        self.resultID = resultID
    }

    /// The payload as text (for logs and tests).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}

/// A request to the audio engine. Transport requests carry a ticket that the
/// engine echoes in its `EngineReport` once the request has taken effect.
public enum AudioRequest: Equatable, Sendable {
    case play(soundID: String, fadeMs: Int, ticket: UInt64)
    case switchTo(soundID: String, crossfadeMs: Int, ticket: UInt64)
    case pause(fadeMs: Int, ticket: UInt64)
    /// Play on with what the engine already has (silence when it has nothing),
    /// fading in over `fadeMs`: the answer to a sound that has no source
    /// (`EngineReport.noSource`), so its ticket is still answered like a play.
    case resume(fadeMs: Int, ticket: UInt64)
    /// Absolute level in [0, 1] as software gain; the engine ramps to it.
    case setLevel(Double)
    /// Absolute level in [0, 1] for an ALSA mixer element (`alsa-mixer`),
    /// which can fail: answered with `EngineReport.levelSet` or
    /// `.levelFailed`, and only then is the level the speaker's (and published).
    case setMixerLevel(Double, ticket: UInt64)
    /// Moves the renderer's long-fade multiplier (0…1, applied on top of the
    /// level in every volume mode) along the volume curve over `overMs`:
    /// equal dB per unit of time, so minutes-long fades sound even. Answered
    /// with `EngineReport.longFadeDone(ticket:)` once there; a long fade
    /// overtaken by another is not answered. It moves only while audio plays
    /// (one asked while paused completes after resuming; 0 ms is at once).
    case longFade(to: Double, overMs: Int, ticket: UInt64)
    /// Software silence of the stream (`true`) or its end, with a short ramp;
    /// the level (software gain, mixer or amp steps) is untouched.
    case setMuted(Bool)
    /// The mixes the engine can play by id (`play`/`switchTo` with a mix's
    /// id): sent at start and whenever they change.
    case mixes([MixDefinition])
    /// Ramp layer `soundID` of the mix being played (the last one asked for)
    /// to `level` in [0, 1]; nothing when that mix has no such layer.
    case setLayerLevel(soundID: String, level: Double)
}

/// Pulses for a step-only amplifier's UP/DOWN lines.
public enum AmpPulse: Equatable, Sendable {
    case up(count: Int)
    case down(count: Int)
}

/// Severity of a core log line.
public enum CoreLogLevel: Equatable, Sendable { case error, warning, notice, info, debug }

/// What the core asks the outside world to do, in order. A `reserveRevisions`
/// is answered with a `.revisionReservation` action; the core publishes no
/// revision beyond the durable reservation until that answer says it is
/// written, so a published revision is durable before it is seen.
public enum SpeakerEffect: Equatable, Sendable {
    case audio(AudioRequest)
    case amp(AmpPulse)
    case publish(Publication)
    /// Durably record that revisions up to `through` may be used (see
    /// `RevisionCounter`), then answer with `.revisionReservation`.
    case reserveRevisions(through: UInt64)
    /// Durably write the persisted state (atomically; rate-limited by the core).
    case saveState(PersistedState)
    /// Show this pattern on the status LED (only with `statusLed` configured).
    case statusLed(StatusLedPattern)
    /// Durably write the mixes changed over MQTT (`mixes.json`), at once.
    case saveMixes(SavedMixes)
    /// Durably write the command journal (`commands.json`, atomically) before
    /// the effects after it: the core puts it first in a dispatch.
    case saveJournal(CommandJournal)
    case log(CoreLogLevel, String)
}
