// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import SpeakerPorts
import SpeakerHost
import SpeakerRuntime
import SoundFiles
import AudioALSA
import Ambience
import Board

/// The whole runtime — core, service group, the real systemd, persistence,
/// audio, board and MQTT services — on the manual-time loop. Audio and MQTT
/// sit behind their ports with in-memory implementations; the persistence
/// service writes real files in a temporary directory; the board is the
/// simulated board on the same loop. Time moves only when the test says.
final class RuntimeHarness {
    let loop = ManualEventLoop()
    let trace = Trace()
    let logs = MemoryLogBackend()
    let audio: InMemoryAudio
    let mqtt: InMemoryMQTT
    /// The wall clock the core reads (seconds since 1970), set by tests that step it.
    let wall = WallClockBox(seconds: 1_795_953_600)
    /// The kernel's NTP-sync flag the core and the sync watch read.
    let synced = SyncFlagBox(true)
    /// The wall-clock step descriptor (readable when a test steps the clock).
    let clockSteps = InMemoryClockSteps()
    let board: SpeakerBoard
    let runtime: SpeakerRuntime
    let directory: String
    let soundFiles: [String]
    var config: SpeakerConfig
    /// What a SIGHUP reload reads.
    var reloadResult: Result<SpeakerConfig, ConfigError>

    /// `soundFiles`: names of short silent WAV files put in the sounds directory before the catalog scan.
    /// `mixer`: the `alsa-mixer` card and element the audio service opens (real alsa-lib).
    init(soundFiles: [String] = [], mixer: (card: String, element: String)? = nil, configure: (inout SpeakerConfig) -> Void = { _ in }) throws {
        var template = Array("/tmp/seams-runtime-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw SystemError(operation: "mkdtemp", errno: errno)
        }
        directory = made
        var config = SpeakerConfig.defaults(hostname: "kitchen")
        config.stateDirectory = directory
        config.audio.soundsDirectory = directory + "/sounds"
        if !soundFiles.isEmpty {
            mkdir(config.audio.soundsDirectory, 0o755)
            let frames = 4_800
            for name in soundFiles {
                try FileIO.writeAtomically(path: "\(config.audio.soundsDirectory)/\(name).wav",
                                           bytes: WAVFormat.header(sampleRate: 48_000, channels: 2, frames: frames)
                                               + [UInt8](repeating: 0, count: frames * 4))
            }
        }
        self.soundFiles = soundFiles
        config.board.kind = .simulated
        config.board.controlSocket = directory + "/control"
        config.inputs.encoder.acceleration = false
        configure(&config)
        self.config = config
        reloadResult = .success(config)
        audio = InMemoryAudio(trace: trace)
        mqtt = InMemoryMQTT(trace: trace)
        let logger = Logger(component: "main", threshold: .debug, backend: logs)
        let stateStore = StateStore(directory: directory, logger: logger)
        let revisions = RevisionStore(directory: directory, logger: logger)
        let mixStore = MixStore(directory: directory, logger: logger)
        let journal = CommandJournalStore(directory: directory, deviceID: config.device.id, logger: logger, enabled: true)
        let catalog = SoundCatalog.load(directory: config.audio.soundsDirectory)
        let core = Speaker(config: config, catalog: catalog.entries,
                           environment: SpeakerEnvironment(
                               wallClock: { [wall] in WallClockReading(seconds: wall.seconds, milliseconds: 0) },
                               clockSynced: { [synced] in synced.value },
                               newSessionID: { "session-1" },
                               software: "ambient-speaker test"),
                           revisions: revisions.counter, restored: stateStore.load(), savedMixes: mixStore.load(),
                           journal: journal.load())
        let trace = trace
        let loop = loop
        board = SpeakerBoard(config: config, loop: loop, logger: logger,
                             openControlSocket: { path, _ in
                                 trace.add("control.open \(path.split(separator: "/").last ?? "")")
                                 return { trace.add("control.close") }
                             },
                             openGPIO: { _, _ throws(GPIOError) in throw GPIOError.opening(path: "(test)", errno: ENODEV) })
        var reload: () -> Result<SpeakerConfig, ConfigError> = { .failure(ConfigError(path: "(test)", message: "unset")) }
        let systemd = SystemdService(notifications: SystemdNotifications(SystemdNotifySocket(logger: logger)),
                                     source: .init(path: directory + "/config.json", required: true, simulatedBoard: false) { _, _ in reload() },
                                     loop: loop, logger: logger)
        runtime = SpeakerRuntime(
            core: core, loop: loop,
            services: SpeakerServices(
                systemd: systemd,
                persistence: PersistenceService(stateStore: stateStore, revisions: revisions, resumeOnBoot: config.session.resumeOnBoot,
                                                mixStore: mixStore, journal: journal),
                audio: AudioService(engine: audio, sounds: CatalogSounds(catalog: catalog, streamer: nil, logger: logger),
                                    mixer: mixer.map { MixerControl.opener(card: $0.card, element: $0.element, loop: loop, logger: logger) },
                                    fadeMs: config.audio.fadeMs, loop: loop, logger: logger),
                board: BoardService(board: board),
                frontEnds: [ClockService(steps: clockSteps, loop: loop, logger: logger),
                            ClockSyncWatch(read: { [synced] in synced.value }, loop: loop)],
                mqtt: MQTTService(client: mqtt, config: config, loop: loop, logger: logger)),
            logger: logger)
        reload = { [unowned self] in self.reloadResult }
    }

    deinit {
        for name in soundFiles { unlink("\(config.audio.soundsDirectory)/\(name).wav") }
        rmdir(config.audio.soundsDirectory)
        for name in ["state.json", "revision", "mixes.json", "commands.json"] { unlink(directory + "/" + name) }
        rmdir(directory)
    }

    var state: SpeakerState { runtime.state }

    /// The wall clock is set to `seconds`: the step descriptor becomes readable.
    func stepClock(to seconds: Int64) {
        wall.seconds = seconds
        clockSteps.stepped = true
        loop.readable(fd: clockSteps.fd)
    }

    /// Audio reports arrive: the report descriptor becomes readable.
    func report(_ reports: AudioEngineReports) {
        audio.pendingReports = reports
        loop.readable(fd: audio.reportFD)
    }

    /// MQTT events arrive: the event descriptor becomes readable.
    func deliver(_ events: [MQTTEventValue]) {
        mqtt.pendingEvents = events
        loop.readable(fd: mqtt.eventFD)
    }

    /// The last ticket the audio port was asked for (`… ticket N`).
    var lastTicket: UInt64? {
        audio.requests.last { $0.contains("ticket") }.flatMap { $0.split(separator: " ").last.flatMap { UInt64($0) } }
    }

    func published(_ suffix: String) -> [String] {
        mqtt.publications.filter { $0.topic == "\(config.topicRoot)/\(suffix)" }.map(\.text)
    }
}

typealias AudioEngineReports = [AudioEngineReport]
typealias MQTTEventValue = MQTTEvent
