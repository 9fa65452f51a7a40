// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// All state of the speaker, one child per domain. Owned by `Speaker`;
/// changed only by `reduce`, each child only by its own reducer (the parent
/// composes them, `Speaker.reduce`).
public struct SpeakerState: Equatable, Sendable {
    /// The running configuration (the one config: live keys change on `.reconfigure`).
    public internal(set) var config: SpeakerConfig
    /// The session, the catalog and what the engine is asked to play.
    public var transport: TransportState
    /// The level, and the mixer writes waiting for confirmation.
    public var volume: VolumeControlState
    /// Revisions and what was last published, with the results waiting for it.
    public var publishing: PublishingState
    /// Results already sent (for duplicates) and retained commands ignored.
    public var commands: CommandLedger
    /// The broker connection and Home Assistant's re-send schedule.
    public var link: LinkState
    /// Button and knob decoding.
    public var input: InputState
    /// The mixes, the selected mix's playing levels and its dropped layers.
    public var mixes: MixesState
    /// What was restored from disk and when the state is next written.
    public var persistence = PersistenceState()
    /// The sleep timer and the long-fade multiplier it lowers.
    public var sleepTimer = SleepTimerState()
    /// Mute, and the gestures' audible cue.
    public var mute = MuteState()
    /// The status LED's pattern.
    public var statusLight = StatusLightState()
    /// Schedule rules, the night cap and the clock's trust.
    public var schedule = ScheduleState()
    /// The catalog entries' images, taken or refused at start.
    public var artwork = ArtworkState()
    /// The engine request tickets, shared by transport and volume requests.
    var tickets = EngineTickets()

    public init(config: SpeakerConfig, catalog: [CatalogEntry], selectedIndex: Int = 0, volume: VolumeState,
                revision: RevisionCounter, inputs: InputDecoders, savedMixes: SavedMixes? = nil) {
        self.config = config
        mixes = MixesState(sounds: catalog.filter { $0.kind == .sound }, configMixes: config.mixes, saved: savedMixes)
        transport = TransportState(catalog: mixes.catalog, selectedIndex: selectedIndex)
        self.volume = VolumeControlState(level: volume)
        publishing = PublishingState(revision: revision)
        commands = CommandLedger()
        link = LinkState()
        input = InputState(decoders: inputs)
    }
}

/// Issues engine request tickets: one counter for every request the engine
/// answers by ticket (transport requests and mixer writes), so no two
/// outstanding requests share one.
struct EngineTickets: Equatable, Sendable {
    private(set) var next: UInt64 = 1

    mutating func issue() -> UInt64 {
        defer { next += 1 }
        return next
    }
}

/// A command waiting for the engine to do what it asked before its result goes out.
struct PendingCommand: Equatable, Sendable {
    var id: String
    var responseTopic: String?
    var correlationData: [UInt8]?
}

/// An accepted command whose result waits for the publication that shows its change.
struct AwaitingResult: Equatable, Sendable {
    var origin: PendingCommand
    /// The level to report in the result (volume commands).
    var level: Double?
    /// The fade to report in the result (`setSleepTimer`).
    var fadeSeconds: Int? = nil
}

/// What applying a command did.
enum ApplyOutcome: Equatable {
    /// Done (or nothing to do); `level` is the level a volume command applied.
    case done(level: Double?)
    /// A sleep timer was set with this fade (reported in the result).
    case sleepTimerSet(fadeSeconds: Int)
    /// Handed to the engine; the result follows its report.
    case awaitingEngine
    case rejected(CommandErrorCode, String)
}
