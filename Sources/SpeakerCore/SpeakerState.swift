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

/// All state of the speaker. Owned by `Speaker`; changed only by `reduce`.
public struct SpeakerState: Equatable, Sendable {
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
    /// What was restored from disk and when the state is next written.
    public var persistence = PersistenceState()

    var nextTicket: UInt64 = 1
    /// Engine tickets not yet reported, with the command (if any) that asked.
    var outstanding: [UInt64: PendingCommand?] = [:]
    /// Mixer writes not yet confirmed: the level asked for and the command (if any) that asked.
    var pendingLevels: [UInt64: PendingLevel] = [:]
    var recentResults = RecentResults(capacity: 256)
    /// What was last published, so only real changes publish (and bump the revision).
    var publishedDevice: DeviceDescriptor?
    var publishedSession: SessionAttributes?
    var publishedCatalog: [CatalogEntry]?

    /// The selected catalog entry.
    public var selectedSound: CatalogEntry { catalog[selectedIndex] }

    public init(catalog: [CatalogEntry], selectedIndex: Int = 0, volume: VolumeState,
                revision: RevisionCounter, inputs: InputDecoders) {
        self.catalog = catalog
        self.selectedIndex = catalog.indices.contains(selectedIndex) ? selectedIndex : 0
        self.volume = volume
        self.revision = revision
        self.inputs = inputs
    }
}
