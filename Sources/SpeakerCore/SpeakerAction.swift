// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What the audio engine tells the core (through the effect runner).
public enum EngineReport: Equatable, Sendable {
    /// The request with this ticket took effect: audio is leaving the speaker.
    case playing(ticket: UInt64)
    /// The request with this ticket took effect: the fade-out finished, silence.
    case paused(ticket: UInt64)
    /// The output device failed or vanished; the engine retries by itself.
    case unavailable(reason: String)
    /// The output device works (again).
    case available
    /// Total underruns recovered so far.
    case underruns(total: Int)
    /// The mixer write with this ticket (`AudioRequest.setMixerLevel`) is done.
    case levelSet(ticket: UInt64)
    /// The mixer write with this ticket failed (`reason`); `actual` is the
    /// level read back from the element afterwards (nil: unreadable).
    case levelFailed(ticket: UInt64, reason: String, actual: Double?)
    /// The sound of a `play`/`switchTo` request (asked with `fadeMs` and
    /// `ticket`) has no playable source (`reason`: missing, unreadable); the
    /// engine was sent nothing yet.
    case noSource(soundID: String, reason: String, fadeMs: Int, ticket: UInt64)
    /// What the ALSA mixer element holds (`db`, nil = muted; `level` on the
    /// speaker's curve), read after the speaker's own write (`ownWrite`) or
    /// when the element signalled a change (`alsa-mixer`). The core decides
    /// whether a change was made elsewhere.
    case mixerReading(db: Double?, level: Double, ownWrite: Bool)
    /// The long fade with this ticket (`AudioRequest.longFade`) reached its multiplier.
    case longFadeDone(ticket: UInt64)
    /// The engine built mix `mixID` for a `play`/`switchTo` without the
    /// `dropped` layers (their files failed); empty: every layer plays.
    case mixLayers(mixID: String, dropped: [DroppedLayer])
}

/// A `command` message as it arrived: raw payload plus MQTT v5 response routing.
public struct IncomingCommand: Equatable, Sendable {
    public var payload: [UInt8]
    public var responseTopic: String?
    public var correlationData: [UInt8]?
    /// The broker delivered it as a stored retained message (on subscribe):
    /// such a command is ignored (`Speaker+Commands`).
    public var retained: Bool

    public init(payload: [UInt8], responseTopic: String? = nil, correlationData: [UInt8]? = nil, retained: Bool = false) {
        self.payload = payload
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.retained = retained
    }
}

/// Everything that can happen to the speaker. Each action carries the
/// monotonic time it happened at, so the core never reads a clock.
public enum SpeakerAction: Equatable, Sendable {
    /// Start-up: publish the initial state, set the initial level, resume if asked.
    case start(at: MonotonicInstant)
    /// A raw edge from the board (real or simulated).
    case lineEdge(LineEdge)
    /// Time passed: run due deadlines (debounce, long press, idle timeout).
    case tick(MonotonicInstant)
    /// A payload arrived on the `command` topic.
    case command(IncomingCommand, at: MonotonicInstant)
    /// Payloads read together on the `command` topic, in order: handled in
    /// one dispatch, so the command journal is written once for all of them
    /// before any of their acknowledgements leaves.
    case commands([IncomingCommand], at: MonotonicInstant)
    /// The broker acknowledged these commands' results (their PUBACKs): they
    /// are no longer owed (`CommandJournal.owed`).
    case resultsDelivered([String], at: MonotonicInstant)
    /// The stop began (SIGTERM), before the MQTT service's closing handshake:
    /// from now on a command is kept in the journal for the next process.
    case stopping(at: MonotonicInstant)
    /// A report from the audio engine.
    case engine(EngineReport, at: MonotonicInstant)
    /// The MQTT link (re)connected: republish everything, `online` last.
    case mqttConnected(at: MonotonicInstant)
    /// The MQTT link dropped.
    case mqttDisconnected(at: MonotonicInstant)
    /// Why the MQTT link is not connected: a failed attempt, or the cause of
    /// the loss just reported by `.mqttDisconnected` (`BrokerHealth`).
    case mqttProblem(ConnectionProblem, at: MonotonicInstant)
    /// The broker delivered a retained message on this speaker's own
    /// `session` topic (on subscribe): evidence for `BrokerHealth` of another
    /// client publishing as this device. `otherPublisher`: the message names
    /// a publishing process other than this one.
    case retainedSessionSeen([UInt8], otherPublisher: Bool, at: MonotonicInstant)
    /// A message on Home Assistant's status topic (`{haPrefix}/status`):
    /// `online` is Home Assistant's birth message after a (re)start, asking
    /// every device to announce itself again; anything else is ignored. A
    /// burst of them gives one re-send (`Speaker+HomeAssistant`).
    case homeAssistantStatus(online: Bool, at: MonotonicInstant)
    /// The wall clock was set (a step: NTP at boot, by hand), noticed by the
    /// runtime through a timer cancelled on clock changes: the schedule is
    /// evaluated again at the new time.
    case clockStepped(at: MonotonicInstant)
    /// The kernel's NTP-sync flag changed (noticed by the runtime's clock
    /// watch; NTP may slew the clock into sync with no step): the schedule
    /// is evaluated again, and `schedules` says the new `clockSynced`.
    case clockSyncChanged(at: MonotonicInstant)
    /// The process is stopping (SIGTERM): write any unsaved state now.
    case shutdown(at: MonotonicInstant)
    /// A new configuration was loaded (SIGHUP): apply the keys that can
    /// change live, keep the rest (see `Speaker+Reconfigure`).
    case reconfigure(SpeakerConfig, at: MonotonicInstant)
    /// The runner performed `reserveRevisions(through:)`: durable when
    /// `failure` is nil, else the reason it could not be written (the ticket
    /// that lets the core publish a revision only once it is reserved).
    case revisionReservation(through: UInt64, failure: String?, at: MonotonicInstant)
}
