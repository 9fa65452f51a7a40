import SpeakerProtocol

/// The listening session as the core tracks it.
public struct SessionState: Equatable, Sendable {
    /// Current or last session id; nil if there never was one.
    public var id: String?
    /// False before the first play and after an end (`ended: true`).
    public var isActive = false
    /// What the listener wants.
    public var intendsPlayback = false
    /// What the engine reported last (truth, not request).
    public var isPlaying = false
    /// When playback intent last became false, for the idle timeout.
    public var pausedSince: MonotonicInstant?
}

/// The level as far as the speaker knows it: a number only for absolute hardware.
public enum VolumeState: Equatable, Sendable {
    case absolute(level: Double)
    case relative
}

/// A command waiting for the engine to do what it asked before its result goes out.
struct PendingCommand: Equatable, Sendable {
    var id: String
    var responseTopic: String?
    var correlationData: [UInt8]?
}

/// A mixer write waiting for its confirmation.
struct PendingLevel: Equatable, Sendable {
    var level: Double
    var origin: PendingCommand?
}

/// An accepted command whose result waits for the publication that shows its change.
struct AwaitingResult: Equatable, Sendable {
    var origin: PendingCommand
    /// The level to report in the result (volume commands).
    var level: Double?
}

/// One reading of the mixer element: its dB, nil when muted.
struct MixerReading: Equatable, Sendable {
    var db: Double?

    /// Equal within 0.005 dB (both muted counts as equal).
    func matches(_ other: Double?) -> Bool {
        switch (db, other) {
        case (nil, nil): return true
        case let (x?, y?): return abs(x - y) < 0.005
        default: return false
        }
    }
}

/// All state of the speaker. Owned by `Speaker`; changed only by `reduce`.
public struct SpeakerState: Equatable, Sendable {
    /// The running configuration (the one config: live keys change on `.reconfigure`).
    public internal(set) var config: SpeakerConfig
    public var catalog: [CatalogEntry]
    public var selectedIndex: Int
    public var session = SessionState()
    public var volume: VolumeState
    public var audio: AudioStatus = .ok
    public var underruns = 0
    public var mqttConnected = false
    /// Why the broker connection is down, and takeover detection.
    public var broker = BrokerHealth()
    /// Retained commands ignored since start (the first one is logged).
    public var retainedCommandsIgnored = 0
    public var revision: RevisionCounter
    /// Why `session` is not being published (revisions cannot be reserved),
    /// or nil while it is. Shown in `device.problem`, the log and `STATUS=`.
    public var sessionWithheld: String?
    /// When a failed revision reservation is tried again.
    public var reservationRetryAt: MonotonicInstant?
    /// Reservations failed in a row (the first is logged as a warning).
    public var reservationFailures = 0
    public var inputs: InputDecoders
    /// When the Home Assistant discovery config is re-sent after Home
    /// Assistant's `online`, or nil when no re-send is due.
    public var homeAssistantResendAt: MonotonicInstant?
    /// Buttons whose current press was already acted on when it began (`.down`):
    /// their `.press` at the release is published but not acted on again.
    public var actedOnDown: Set<TransportButton> = []
    /// What was restored from disk and when the state is next written.
    public var persistence = PersistenceState()

    var nextTicket: UInt64 = 1
    /// Engine tickets not yet reported, with the command (if any) that asked.
    var outstanding: [UInt64: PendingCommand?] = [:]
    /// Mixer writes not yet confirmed: the level asked for and the command (if any) that asked.
    var pendingLevels: [UInt64: PendingLevel] = [:]
    var recentResults = RecentResults(capacity: 256)
    /// Accepted commands waiting for the publication that shows their change.
    var resultsAwaitingPublish: [AwaitingResult] = []
    /// The mixer element's last reading (`alsa-mixer`), to tell the
    /// speaker's own change notifications from a change made elsewhere.
    var lastMixerReading: MixerReading?
    /// What was last published, so only real changes publish (and bump the revision).
    var publishedDevice: DeviceDescriptor?
    var publishedSession: SessionAttributes?
    var publishedCatalog: [CatalogEntry]?

    /// The selected catalog entry.
    public var selectedSound: CatalogEntry { catalog[selectedIndex] }

    public init(config: SpeakerConfig, catalog: [CatalogEntry], selectedIndex: Int = 0, volume: VolumeState,
                revision: RevisionCounter, inputs: InputDecoders) {
        self.config = config
        self.catalog = catalog
        self.selectedIndex = catalog.indices.contains(selectedIndex) ? selectedIndex : 0
        self.volume = volume
        self.revision = revision
        self.inputs = inputs
    }
}
