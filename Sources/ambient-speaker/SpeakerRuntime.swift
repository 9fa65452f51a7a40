#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import Ambience
import AudioALSA
import MQTTLink
import Board

/// The running speaker: wires the adapters (event loop, audio engine, MQTT
/// link, board) to the core and performs the core's effects. Everything runs
/// on the main thread's event loop; the audio engine and libmosquitto have
/// their own threads and talk to the loop through eventfds.
final class SpeakerRuntime {
    let config: SpeakerConfig
    let logger: Logger
    let loop: EventLoop
    var speaker: Speaker
    let engine: AudioEngine
    let mqtt: MQTTLink
    let revisions: RevisionStore
    var board: SimulatedBoard?
    var controlServer: LineServer?
    var tickTimer: EventLoop.TimerID?
    var demo: DemoConsole?
    var exitCode: Int32 = 0

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
            try EventLoop.blockSignals([SIGTERM, SIGINT, SIGHUP])
            signal(SIGPIPE, SIG_IGN)
            let runtime = try SpeakerRuntime(config: config, logger: logger, demo: demo)
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
        guard config.board.kind == .simulated else {
            throw StartupError(exitCode: 2, message: "board.kind \"gpio\": this build has no libgpiod board yet; use board.kind \"simulated\" (or `ambient-speaker demo`)")
        }
        guard config.volume.mode != .alsaMixer else {
            throw StartupError(exitCode: 2, message: "volume.mode \"alsa-mixer\" is not available in this build yet; use \"software\" or \"gpio-step\"")
        }
        revisions = RevisionStore(directory: config.stateDirectory, logger: logger.named("state"))
        AudioDevices.silenceLibraryMessages()
        var audioSettings = AudioEngine.Settings(device: config.audio.device, sampleRate: config.audio.sampleRate,
                                                 periodFrames: config.audio.periodFrames, bufferFrames: config.audio.bufferFrames)
        if demo && config.audio.device == "default" && !AudioDevices.canOpen(device: "default") {
            audioSettings.device = "file:'ambient-demo.wav',wav"
            logger.notice("no sound card: the demo writes its audio to ambient-demo.wav")
        }
        engine = AudioEngine(settings: audioSettings, logger: logger.named("audio"))
        let root = config.topicRoot
        var password: String?
        if let file = config.mqtt.passwordFile {
            do {
                password = try FileIO.readText(path: file, maxBytes: 4096).split(separator: "\n").first.map(String.init) ?? ""
            } catch {
                throw StartupError(exitCode: 1, message: "mqtt.passwordFile: cannot read \(file): \(error.message)")
            }
        }
        let settings = MQTTSettings(
            host: config.mqtt.host, port: config.mqtt.port, clientID: "ambient-speaker-\(config.device.id)",
            keepaliveSeconds: config.mqtt.keepaliveSeconds, username: config.mqtt.username, password: password,
            tls: config.mqtt.tls.map { MQTTTLS(caFile: $0.caFile, certFile: $0.certFile, keyFile: $0.keyFile) },
            will: MQTTWill(topic: "\(root)/availability", payload: Array("offline".utf8), qos: 1, retain: true),
            subscriptions: ["\(root)/command"])
        mqtt = try MQTTLink(settings: settings, logger: logger.named("mqtt"))
        let catalog = BuiltInSounds.all.map { CatalogEntry(id: $0.id, name: $0.name, summary: $0.summary) }
        let environment = SpeakerEnvironment(
            wallClock: {
                let now = WallClock.now()
                return WallClockReading(seconds: now.seconds, milliseconds: Int(now.nanoseconds / 1_000_000))
            },
            clockSynced: { SystemFacts.isClockSynchronised() },
            newSessionID: { UUIDText.random() },
            software: "ambient-speaker \(CommandLineTool.version)")
        speaker = Speaker(config: config, catalog: catalog, environment: environment,
                          revisionReservation: revisions.lastReservation)
        if demo { self.demo = DemoConsole() }
    }

    /// Starts everything, runs the loop, shuts down gracefully; returns the exit code.
    func run() throws -> Int32 {
        logResolvedConfiguration()
        do {
            try engine.start(failIfUnavailable: false)
        } catch {
            throw StartupError(exitCode: 2, message: "audio: \(error)")
        }
        loop.addReader(fd: engine.reportFD) { [unowned self] in self.engineReports() }
        loop.addReader(fd: mqtt.eventFD) { [unowned self] in self.mqttEvents() }
        try startBoard()
        try loop.onSignal([SIGTERM, SIGINT, SIGHUP]) { [unowned self] signal in
            if signal == SIGHUP {
                self.logger.notice("SIGHUP: configuration reload is not supported yet; restart the service to apply changes")
                return
            }
            self.logger.notice("signal \(signal): shutting down")
            self.loop.stop()
        }
        do { try mqtt.start() } catch {
            throw StartupError(exitCode: 2, message: "mqtt: \(error)")
        }
        dispatch(.start(at: now()))
        if let notifier = try? SystemdNotifier.fromEnvironment() {
            try? notifier.notify("READY=1\nSTATUS=playing ambience; MQTT \(config.mqtt.host):\(config.mqtt.port)")
        }
        try loop.run()
        shutdown()
        return exitCode
    }

    private func startBoard() throws {
        let board = SimulatedBoard(loop: loop, logger: logger.named("board")) { [unowned self] edge in
            self.dispatch(.lineEdge(edge))
        }
        self.board = board
        if let path = config.board.controlSocket {
            do {
                controlServer = try LineServer(path: path, loop: loop, logger: logger.named("control")) { [unowned board] line in
                    board.handle(command: line)
                }
            } catch {
                throw StartupError(exitCode: 2, message: "board.controlSocket \(path): \(error)")
            }
        }
        if let demo {
            try demo.start(loop: loop, board: board) { [unowned self] in self.loop.stop() }
        }
    }

    /// Fade out, say `offline`, disconnect, close the device.
    private func shutdown() {
        demo?.stop()
        engine.shutdown(fadeMs: min(config.audio.fadeMs, 1000))
        mqtt.shutdown(finalPublish: (topic: "\(config.topicRoot)/availability", payload: Array("offline".utf8), retain: true),
                      timeoutMs: 1500)
        controlServer?.close()
        logger.info("stopped")
    }

    func now() -> MonotonicInstant { MonotonicInstant(nanoseconds: MonotonicClock.now()) }

    /// Runs one action through the core, performs its effects, re-arms the deadline timer.
    func dispatch(_ action: SpeakerAction) {
        let effects = speaker.reduce(action)
        for effect in effects { perform(effect) }
        if let tickTimer { loop.cancel(tickTimer) }
        tickTimer = speaker.nextDeadline.map { deadline in
            loop.schedule(at: deadline.nanoseconds) { [unowned self] in
                self.tickTimer = nil
                self.dispatch(.tick(self.now()))
            }
        }
        demo?.show(speaker.state, mqttConnected: mqtt.isConnected)
    }

    private func logResolvedConfiguration() {
        logger.info("ambient-speaker \(CommandLineTool.version): device \"\(config.device.id)\", board \(config.board.kind.rawValue), "
                    + "volume \(config.volume.mode.rawValue), topics \(config.topicRoot)/…, broker \(config.mqtt.host):\(config.mqtt.port)")
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
