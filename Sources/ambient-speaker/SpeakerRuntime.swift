#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import AudioALSA
import MQTTLink
import Board

/// The running speaker: wires the adapters (event loop, audio engine, MQTT
/// link, board) to the core and performs the core's effects. Everything runs
/// on the main thread's event loop; the audio engine and libmosquitto have
/// their own threads and talk to the loop through eventfds.
///
/// One file per seam: audio in `+Audio`, MQTT in `+MQTT`, the board in
/// `+Board`, signals and shutdown in `+Lifecycle`, the effect runner in `+Effects`.
final class SpeakerRuntime {
    let config: SpeakerConfig
    let logger: Logger
    let loop: EventLoop
    var speaker: Speaker
    let engine: AudioEngine
    /// The sound catalog, the read-ahead thread for files, the mixer (see `+Audio`, `+Mixer`).
    let audioParts: AudioParts
    let mqtt: MQTTLink
    let revisions: RevisionStore
    let stateStore: StateStore
    /// Where the config came from, for SIGHUP reloads (set by `launch`).
    var configSource: (path: String, required: Bool)?
    /// systemd notifications (readiness, watchdog, status); set when signals are installed.
    var service: SystemdService?
    var board: SimulatedBoard?
    /// The libgpiod board (`board.kind "gpio"`).
    var gpioBoard: GPIOBoard?
    /// The step-only amp's pulse schedule (`volume.mode "gpio-step"`).
    var amp: AmpStepper?
    var controlServer: LineServer?
    var tickTimer: EventLoop.TimerID?
    var demo: DemoConsole?
    var exitCode: Int32 = 0
    /// Actions that effects answered with (a revision reservation's outcome),
    /// dispatched after the effects of the action that caused them.
    var followUps: [SpeakerAction] = []

    /// Loads the config, builds the runtime and runs it until SIGTERM/SIGINT (or `q` in demo).
    static func launch(configPath: String?, demo: Bool, logger: Logger) -> Int32 {
        var loaded = ConfigLoader(logger: logger).load(path: configPath ?? CommandLineTool.defaultConfigPath,
                                                       required: configPath != nil)
        if demo, case .success(var config) = loaded {
            config.board.kind = .simulated
            loaded = .success(config)
        }
        let config: SpeakerConfig
        switch loaded {
        case .success(let c): config = c
        case .failure(let error):
            logger.error("configuration: \(error)")
            return 1
        }
        do {
            try blockSignals()
            let runtime = try SpeakerRuntime(config: config, logger: logger, demo: demo)
            runtime.configSource = (configPath ?? CommandLineTool.defaultConfigPath, configPath != nil)
            return try runtime.run()
        } catch let error as StartupError {
            logger.error(error.message)
            return error.exitCode
        } catch {
            logger.error("\(error)")
            return 2
        }
    }

    init(config: SpeakerConfig, logger: Logger, demo: Bool) throws {
        self.config = config
        self.logger = logger
        loop = try EventLoop()
        try Self.checkSupported(config)
        revisions = RevisionStore(directory: config.stateDirectory, logger: logger.named("state"))
        stateStore = StateStore(directory: config.stateDirectory, logger: logger.named("state"))
        engine = Self.makeEngine(config: config, logger: logger, demo: demo)
        audioParts = Self.makeAudioParts(config: config, logger: logger)
        mqtt = try Self.makeMQTT(config: config, logger: logger)
        let environment = SpeakerEnvironment(
            wallClock: {
                let now = WallClock.now()
                return WallClockReading(seconds: now.seconds, milliseconds: Int(now.nanoseconds / 1_000_000))
            },
            clockSynced: { SystemFacts.isClockSynchronised() },
            newSessionID: { UUIDText.random() },
            software: "ambient-speaker \(CommandLineTool.version)")
        speaker = Speaker(config: config, catalog: Self.makeCatalog(parts: audioParts),
                          environment: environment, revisions: revisions.counter,
                          restored: stateStore.load())
        if demo { self.demo = DemoConsole() }
    }

    /// Starts everything, runs the loop, shuts down gracefully; returns the exit code.
    func run() throws -> Int32 {
        logResolvedConfiguration()
        try startAudio()
        try startBoard()
        try installSignalHandlers()
        try startMQTT()
        dispatch(.start(at: now()))
        announceReady()
        try loop.run()
        shutdown()
        return exitCode
    }

    func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: MonotonicClock.now()) }

    /// Runs one action through the core, performs its effects (and the
    /// actions they answer with, in order), re-arms the deadline timer.
    func dispatch(_ action: SpeakerAction) {
        var next: SpeakerAction? = action
        while let current = next {
            for effect in speaker.reduce(current) { perform(effect) }
            next = followUps.isEmpty ? nil : followUps.removeFirst()
        }
        if let tickTimer { loop.cancel(tickTimer) }
        tickTimer = speaker.nextDeadline.map { deadline in
            loop.schedule(at: deadline.nanoseconds) { [unowned self] in
                self.tickTimer = nil
                self.dispatch(.tick(self.now()))
            }
        }
        demo?.show(speaker.state, mqttConnected: mqtt.isConnected)
        updateServiceStatus()
    }

    private func logResolvedConfiguration() {
        logger.info("ambient-speaker \(CommandLineTool.version): device \"\(config.device.id)\", board \(config.board.kind.rawValue), "
                    + "volume \(config.volume.mode.rawValue), topics \(config.topicRoot)/…, broker \(config.mqtt.host):\(config.mqtt.port)")
    }

    /// Refuses configurations this build cannot run yet (exit 2, with the key).
    private static func checkSupported(_ config: SpeakerConfig) throws {
    }
}

/// A start-up failure with the exit code it maps to (1 configuration, 2 runtime).
struct StartupError: Error {
    var exitCode: Int32
    var message: String
}

/// Random (version 4) UUIDs as text, for session ids.
enum UUIDText {
    static func random() -> String {
        var b = randomBytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { byte -> String in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}
