#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// Signals, readiness and shutdown.
extension SpeakerRuntime {
    /// Blocks the signals the loop handles through signalfd. Must run before
    /// any thread (audio, MQTT) starts, so every thread inherits the mask.
    static func blockSignals() throws {
        try EventLoop.blockSignals([SIGTERM, SIGINT, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
    }

    func installSignalHandlers() throws {
        try loop.onSignal([SIGTERM, SIGINT, SIGHUP]) { [unowned self] signal in
            if signal == SIGHUP {
                self.logger.notice("SIGHUP: configuration reload is not supported yet; restart the service to apply changes")
                return
            }
            self.logger.notice("signal \(signal): shutting down")
            self.loop.stop()
        }
    }

    /// Tells systemd (when it started us with NOTIFY_SOCKET) that the speaker is up.
    func announceReady() {
        if let notifier = try? SystemdNotifier.fromEnvironment() {
            try? notifier.notify("READY=1\nSTATUS=playing ambience; MQTT \(config.mqtt.host):\(config.mqtt.port)")
        }
    }

    /// Fade out, say `offline`, disconnect, close the device.
    func shutdown() {
        demo?.stop()
        engine.shutdown(fadeMs: min(config.audio.fadeMs, 1000))
        stopMQTT()
        controlServer?.close()
        logger.info("stopped")
    }
}
