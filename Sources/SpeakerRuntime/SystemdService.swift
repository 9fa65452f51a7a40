// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop

/// The systemd seam: what the service manager says (signals) and what the
/// speaker tells it (``SystemdNotifications``).
///
/// - SIGTERM / SIGINT: stop the loop; the graceful shutdown follows.
/// - SIGHUP: re-read the config file (``ConfigSource``); a valid one goes to
///   the core as `.reconfigure` (which applies the live keys), an invalid one
///   is logged and shown in `STATUS=` while the running config is kept.
/// - `READY=1` on the loop's first turn (every service has started), the
///   watchdog pinged from the loop, `STATUS=` after each dispatch,
///   `STOPPING=1` when shutdown begins.
///
/// Started first, so it stops last. Loop thread only.
public final class SystemdService: SpeakerService {
    /// Where the running configuration came from, for SIGHUP.
    public struct ConfigSource {
        public var path: String
        /// A missing file is an error (an explicit `--config`).
        public var required: Bool
        /// The demo always runs the simulated board.
        public var simulatedBoard: Bool
        /// Reads and validates the file (live: ``ConfigLoader``).
        public var load: (_ path: String, _ required: Bool) -> Result<SpeakerConfig, ConfigError>

        public init(path: String, required: Bool, simulatedBoard: Bool,
                    load: @escaping (_ path: String, _ required: Bool) -> Result<SpeakerConfig, ConfigError>) {
            self.path = path
            self.required = required
            self.simulatedBoard = simulatedBoard
            self.load = load
        }
    }

    public let name = "systemd"
    private let notifications: SystemdNotifications
    private let source: ConfigSource
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private weak var context: ServiceContext?
    private var status = ""
    /// What `status` was built from.
    private var statusInputs: StatusInputs?
    private var timers: [LoopTimerID] = []

    public init(notifications: SystemdNotifications, source: ConfigSource, loop: any EventLoopProtocol, logger: Logger) {
        self.notifications = notifications
        self.source = source
        self.loop = loop
        self.logger = logger
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        notifications.logConfiguration()
        do {
            try loop.onSignal([ProcessSignal.terminate, ProcessSignal.interrupt, ProcessSignal.hangup]) { [unowned self] signal in
                if signal == ProcessSignal.hangup {
                    self.reload()
                } else {
                    self.context?.requestStop("signal \(signal): shutting down")
                }
            }
        } catch {
            throw StartupError(exitCode: 2, message: "signals: \(error)")
        }
        timers.append(loop.schedule(after: 0) { [unowned self] in
            self.notifications.ready(status: self.status)
            self.logger.info("ready")
        })
        if let interval = notifications.watchdogPingMs { scheduleWatchdog(every: interval) }
    }

    /// Rebuilds `STATUS=` only when its inputs changed, and not at all
    /// without a notify socket (nobody would read it): it is observed after
    /// every dispatch, i.e. after every command, while its inputs rarely change.
    public func observe(_ state: SpeakerState) {
        guard notifications.isActive else { return }
        let inputs = StatusInputs(state)
        guard inputs != statusInputs else { return }
        statusInputs = inputs
        status = inputs.text
        notifications.update(status: status)
    }

    public func shutdownBegan() { notifications.stopping() }

    public func stop() {
        for timer in timers { loop.cancel(timer) }
        timers = []
        context = nil
    }

    /// Pings systemd's watchdog from the loop: a loop that hangs stops
    /// pinging, and systemd restarts the service.
    private func scheduleWatchdog(every milliseconds: Int) {
        timers = [loop.schedule(after: milliseconds) { [unowned self] in
            self.notifications.ping()
            self.scheduleWatchdog(every: milliseconds)
        }]
    }

    /// SIGHUP: re-reads the config file; a valid one goes to the core.
    private func reload() {
        notifications.reloading()
        switch source.load(source.path, source.required) {
        case .success(var newConfig):
            if source.simulatedBoard { newConfig.board.kind = .simulated }
            logger.notice("SIGHUP: reloading \(source.path)")
            notifications.reloadError = nil
            if let context { context.send(.reconfigure(newConfig, at: context.now())) }
        case .failure(let error):
            logger.error("SIGHUP: \(source.path) is invalid, keeping the running configuration: \(error)")
            notifications.reloadError = "\(error)"
        }
        notifications.ready(status: status)
    }
}
