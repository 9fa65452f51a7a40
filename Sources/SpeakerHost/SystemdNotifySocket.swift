// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import SpeakerPorts

/// The systemd port's live end: `$NOTIFY_SOCKET` (``SystemdNotifier``) and
/// the watchdog interval from `$WATCHDOG_USEC`. Not started by systemd, it
/// is inactive and sends nothing. Loop thread only.
public final class SystemdNotifySocket: SystemdNotify {
    private let notifier: SystemdNotifier?
    private let logger: Logger
    public let watchdogPingMs: Int?

    /// Reads `$NOTIFY_SOCKET`, `$WATCHDOG_USEC` and `$WATCHDOG_PID` (a
    /// watchdog meant for another process is ignored).
    public init(logger: Logger) {
        self.logger = logger
        var notifier: SystemdNotifier?
        do { notifier = try SystemdNotifier.fromEnvironment() } catch {
            logger.error("NOTIFY_SOCKET is unusable (\(error.message)); systemd will not hear from this service")
        }
        self.notifier = notifier
        var ping: Int?
        if notifier != nil, let text = getenv("WATCHDOG_USEC").map({ String(cString: $0) }), let usec = Int(text), usec > 0 {
            let pidText = getenv("WATCHDOG_PID").map { String(cString: $0) }
            if pidText == nil || pidText == String(getpid()) { ping = max(1, usec / 2000) }
        }
        watchdogPingMs = ping
    }

    public var isActive: Bool { notifier != nil }

    public func logConfiguration() {
        guard let notifier else {
            logger.info("not started by systemd (no NOTIFY_SOCKET): no readiness or watchdog notifications")
            return
        }
        logger.info("systemd notify socket \(notifier.socketPath); "
                    + (watchdogPingMs.map { "watchdog ping every \($0) ms from the main loop" } ?? "no watchdog"))
    }

    public func notify(_ message: String) {
        guard let notifier else { return }
        do { try notifier.notify(message) } catch {
            logger.warning("sd_notify failed: \(error.message)")
        }
    }
}
