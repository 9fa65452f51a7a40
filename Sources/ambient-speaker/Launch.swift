// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerHost
import SpeakerRuntime
import SpeakerPorts
import AudioALSA
import Board

/// `run` and `demo`: loads the config, builds the loop, the core and the
/// service group — systemd, persistence, audio, board, MQTT (and the demo
/// console), started in that order and stopped in reverse — then runs the
/// loop until SIGTERM/SIGINT (or `q` in the demo). Nothing here is global.
enum Launch {
    static func run(configPath: String?, demo: Bool, logger: Logger) -> Int32 {
        let path = configPath ?? CommandLineTool.defaultConfigPath
        var loaded = ConfigLoader(logger: logger).load(path: path, required: configPath != nil)
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
            try LiveParts.blockSignals()
            let loop = try EventLoop()
            let runtime = try build(config: config, source: path, required: configPath != nil, demo: demo, loop: loop, logger: logger)
            try runtime.start()
            loop.schedule(after: 10_000) { StartupPages.release() }  // start-up's code pages, once the speaker has settled
            try loop.run()
            return runtime.stop()
        } catch let error as StartupError {
            logger.error(error.message)
            return error.exitCode
        } catch {
            logger.error("\(error)")
            return 2
        }
    }

    /// The runtime with its live services, in start order.
    static func build(config: SpeakerConfig, source: String, required: Bool, demo: Bool, loop: EventLoop,
                      logger: Logger) throws(StartupError) -> SpeakerRuntime {
        let revisions = RevisionStore(directory: config.stateDirectory, logger: logger.named("state"))
        let stateStore = StateStore(directory: config.stateDirectory, logger: logger.named("state"))
        let mixStore = MixStore(directory: config.stateDirectory, logger: logger.named("state"))
        mixStore.removeInterruptedWrites()
        let journal = CommandJournalStore(directory: config.stateDirectory, deviceID: config.device.id, logger: logger.named("state"))
        let engine = LiveParts.engine(config: config, logger: logger, demo: demo)
        let catalog = LiveParts.catalog(config: config, logger: logger)
        let sounds = LiveParts.sounds(catalog: catalog, config: config, logger: logger)
        let link = try LiveParts.mqttLink(config: config, logger: logger)
        let simulatedClock = simulatedWallClock(config: config, logger: logger)
        let environment = LiveParts.environment(software: "ambient-speaker \(CommandLineTool.version)", simulatedClock: simulatedClock)
        let core = Speaker(config: config, catalog: catalog.entries, environment: environment,
                           revisions: revisions.counter, restored: stateStore.load(), savedMixes: mixStore.load(),
                           artwork: LiveParts.artwork(catalog: catalog, config: config), journal: journal.load())
        logger.info("ambient-speaker \(CommandLineTool.version): device \"\(config.device.id)\", board \(config.board.kind.rawValue), "
                    + "volume \(config.volume.mode.rawValue), topics \(config.topicRoot)/…, broker \(config.mqtt.host):\(config.mqtt.port)")
        let board = SpeakerBoard(
            config: config, loop: loop, logger: logger,
            openControlSocket: { path, handler in
                let server = try LineServer(path: path, loop: loop, logger: logger.named("control"), handler: handler)
                return { server.close() }
            },
            openGPIO: { onEdge, onFailure throws(GPIOError) in
                try GPIOBoard(config: config, loop: loop, logger: logger.named("gpio"), lines: gpioLines(loop: loop, logger: logger),
                              onEdge: onEdge, onFailure: onFailure)
            },
            simulatedClock: simulatedClock)
        let mixer = config.volume.mode == .alsaMixer
            ? MixerControl.opener(card: config.volume.mixer.card, element: config.volume.mixer.element, loop: loop, logger: logger)
            : nil
        let services = SpeakerServices(
            systemd: SystemdService(notifications: SystemdNotifications(SystemdNotifySocket(logger: logger.named("systemd"))),
                                    source: .init(path: source, required: required, simulatedBoard: demo) { path, required in
                                        ConfigLoader(logger: logger).load(path: path, required: required)
                                    },
                                    loop: loop, logger: logger),
            persistence: PersistenceService(stateStore: stateStore, revisions: revisions, resumeOnBoot: config.session.resumeOnBoot,
                                            mixStore: mixStore, journal: journal),
            audio: AudioService(engine: engine, sounds: sounds, mixer: mixer, fadeMs: config.audio.fadeMs, loop: loop, logger: logger),
            board: BoardService(board: board),
            frontEnds: (demo ? [DemoConsole(loop: loop, board: board)] : [])
                + clockService(loop: loop, logger: logger, simulatedClock: simulatedClock)
                + [ClockSyncWatch(read: environment.clockSynced, loop: loop)],
            mqtt: MQTTService(client: link, config: config, loop: loop, logger: logger))
        return SpeakerRuntime(core: core, loop: loop, services: services, logger: logger)
    }

    /// The wall-clock watch (nil, logged, when the kernel refuses the timer:
    /// the schedule then follows a step only at its next deadline).
    /// With the simulated board's clock, its steps (the `clock` commands)
    /// too: its time is the host's moved, so a step of either is one.
    static func clockService(loop: EventLoop, logger: Logger, simulatedClock: SimulatedWallClock?) -> [any SpeakerService] {
        var services: [any SpeakerService] = []
        do {
            services.append(ClockService(steps: try ClockStepTimer(), loop: loop, logger: logger.named("clock")))
        } catch {
            logger.warning("clock: cannot watch for wall-clock steps (\(error)); schedules notice a step at their next deadline")
        }
        if let simulatedClock { services.append(ClockService(steps: simulatedClock, loop: loop, logger: logger.named("clock"))) }
        return services
    }

    /// The board's libgpiod access: live, or — when the environment variable
    /// `AMBIENT_SPEAKER_GPIO_TRACE` names a file — live and recorded there as a
    /// ``GPIOTrace`` (how the HIL VM records traces for Tests/BoardTests).
    static func gpioLines(loop: EventLoop, logger: Logger) -> any GPIOLineAccess {
        let live = LibGPIODLines()
        guard let path = getenv("AMBIENT_SPEAKER_GPIO_TRACE").map({ String(cString: $0) }), !path.isEmpty else { return live }
        do throws(SystemError) {
            let recording = try RecordingGPIOLines(wrapping: live, clock: { [unowned loop] in loop.now() }, path: path)
            logger.notice("gpio: recording every libgpiod access to \(path) (AMBIENT_SPEAKER_GPIO_TRACE)")
            return recording
        } catch {
            logger.warning("gpio: cannot record to \(path) (AMBIENT_SPEAKER_GPIO_TRACE): \(error); not recording")
            return live
        }
    }

    /// The simulated board (a test or the demo) runs on a wall clock of its
    /// own, the host's moved by its `clock` commands, so a soak can step the
    /// speaker's time without setting the host's (a step of the host's clock
    /// still counts). The gpio board: none.
    static func simulatedWallClock(config: SpeakerConfig, logger: Logger) -> SimulatedWallClock? {
        guard config.board.kind == .simulated else { return nil }
        do {
            return try SimulatedWallClock()
        } catch {
            logger.warning("board: no simulated clock (\(error)); the speaker follows the host's clock")
            return nil
        }
    }
}

extension ClockStepTimer: WallClockSteps {}
extension SimulatedWallClock: WallClockSteps {}
