#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem

/// Signals, readiness, the watchdog, configuration reload and shutdown.
///
/// - SIGTERM / SIGINT: stop the loop; `shutdown()` then flushes the state,
///   fades out, publishes `offline` and exits 0 — within 2 s.
/// - SIGHUP: reload the config file; apply the live keys
///   (`Speaker.liveKeys`), keep the running config with an error when the
///   new file is invalid.
extension SpeakerRuntime {
    /// The longest fade-out on SIGTERM, so fade + `offline` fit in 2 s.
    static let shutdownFadeLimitMs = 500

    /// Blocks the signals the loop handles through signalfd. Must run before
    /// any thread (audio, MQTT) starts, so every thread inherits the mask.
    static func blockSignals() throws {
        try EventLoop.blockSignals([SIGTERM, SIGINT, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
    }

    func installSignalHandlers() throws {
        let service = SystemdService(logger: logger.named("systemd"))
        self.service = service
        service.logConfiguration()
        stateStore.logConfiguration(resumeOnBoot: config.session.resumeOnBoot)
        try loop.onSignal([SIGTERM, SIGINT, SIGHUP]) { [unowned self] signal in
            if signal == SIGHUP {
                self.reloadConfiguration()
                return
            }
            self.logger.notice("signal \(signal): shutting down")
            self.loop.stop()
        }
    }

    /// `READY=1` on the loop's first turn: audio, inputs and the loop are up
    /// (MQTT may still be connecting). Starts the watchdog pings.
    func announceReady() {
        loop.schedule(after: 0) { [unowned self] in
            self.service?.ready(status: self.statusText)
            self.logger.info("ready")
        }
        loop.schedule(after: 10_000) { StartupPages.release() }  // start-up's code pages (README "Benchmarks")
        if let interval = service?.watchdogPingMs { scheduleWatchdog(every: interval) }
    }

    /// Pings systemd's watchdog from the main loop: a loop that hangs stops
    /// pinging, and systemd restarts the service.
    private func scheduleWatchdog(every milliseconds: Int) {
        loop.schedule(after: milliseconds) { [unowned self] in
            self.service?.ping()
            self.scheduleWatchdog(every: milliseconds)
        }
    }

    /// `STATUS=` for the current state (sent only when it changed).
    func updateServiceStatus() {
        service?.update(status: statusText)
        // The core's verdict on a session takeover slows the link's reconnects.
        mqtt.setPatientReconnects(speaker.state.broker.takeoverSuspected)
    }

    var statusText: String { speaker.state.statusText(mqttConnected: mqtt.isConnected) }

    /// SIGHUP: re-reads the config file. A valid file goes to the core, which
    /// applies the live keys and names the ones that need a restart; an
    /// invalid one is logged and the running configuration kept.
    func reloadConfiguration() {
        guard let source = configSource else {
            logger.notice("SIGHUP: no configuration file to reload")
            return
        }
        service?.reloading()
        switch ConfigLoader(logger: logger).load(path: source.path, required: source.required) {
        case .success(var newConfig):
            if demo != nil { newConfig.board.kind = .simulated }
            logger.notice("SIGHUP: reloading \(source.path)")
            service?.reloadError = nil
            dispatch(.reconfigure(newConfig, at: now()))
        case .failure(let error):
            logger.error("SIGHUP: \(source.path) is invalid, keeping the running configuration: \(error)")
            service?.reloadError = "\(error)"
        }
        service?.ready(status: statusText)
    }

    /// Writes unsaved state, fades out, says `offline`, disconnects, closes
    /// the device. Bounded: fade ≤ `shutdownFadeLimitMs`, then MQTT's own
    /// acknowledged-offline timeout.
    func shutdown() {
        let started = MonotonicClock.now()
        service?.stopping()
        dispatch(.shutdown(at: now()))
        demo?.stop()
        engine.shutdown(fadeMs: min(speaker.config.audio.fadeMs, Self.shutdownFadeLimitMs))
        stopMQTT()
        controlServer?.close()
        logger.info("stopped in \((MonotonicClock.now() - started) / 1_000_000) ms")
    }
}
