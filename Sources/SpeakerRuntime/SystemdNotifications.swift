#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem

/// The notifications of a systemd service (`Type=notify`): readiness, the
/// watchdog, `STATUS=` text, reload and stop. Without `$NOTIFY_SOCKET` (not
/// started by systemd) every call is a no-op. Used by ``SystemdService``.
/// Main (loop) thread only.
public final class SystemdNotifications {
    private let notifier: SystemdNotifier?
    private let logger: Logger
    /// Half of `$WATCHDOG_USEC`, in milliseconds; nil when the watchdog is off.
    public let watchdogPingMs: Int?
    private var lastStatus: String?
    /// The last reload's error, shown in `STATUS=` until a reload succeeds.
    public var reloadError: String? {
        didSet { if let lastStatus { update(status: lastStatus, force: true) } }
    }

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

    /// Logs how the service talks to systemd (once, at start).
    public func logConfiguration() {
        guard let notifier else {
            logger.info("not started by systemd (no NOTIFY_SOCKET): no readiness or watchdog notifications")
            return
        }
        logger.info("systemd notify socket \(notifier.socketPath); "
                    + (watchdogPingMs.map { "watchdog ping every \($0) ms from the main loop" } ?? "no watchdog"))
    }

    /// Whether systemd listens (`$NOTIFY_SOCKET` was usable).
    public var isActive: Bool { notifier != nil }

    /// `READY=1` with the current status.
    public func ready(status: String) {
        lastStatus = status
        send("READY=1\nSTATUS=\(decorated(status))")
    }

    /// `WATCHDOG=1`: the main loop is alive.
    public func ping() { send("WATCHDOG=1") }

    /// `RELOADING=1` before a configuration reload; `ready(status:)` ends it.
    public func reloading() { send("RELOADING=1\nSTATUS=reloading the configuration") }

    /// `STOPPING=1`.
    public func stopping() { send("STOPPING=1\nSTATUS=stopping: fading out, going offline") }

    /// `STATUS=` when the text changed.
    public func update(status: String, force: Bool = false) {
        guard force || status != lastStatus else { return }
        lastStatus = status
        send("STATUS=\(decorated(status))")
    }

    private func decorated(_ status: String) -> String {
        reloadError.map { "\(status) (config reload failed: \($0))" } ?? status
    }

    private func send(_ message: String) {
        guard let notifier else { return }
        do { try notifier.notify(message) } catch {
            logger.warning("sd_notify failed: \(error.message)")
        }
    }
}

/// What the `STATUS=` line shows, taken from the state; the line is built
/// from these fields alone (`text`), so `SystemdService` can rebuild it only
/// when they changed and never miss a change that shows.
struct StatusInputs: Equatable {
    var audio: AudioStatus
    var isPlaying: Bool
    var intendsPlayback: Bool
    var soundID: String
    var volume: VolumeState
    var broker: BrokerHealth
    var mqttConnected: Bool
    var sessionWithheld: String?

    init(_ s: SpeakerState) {
        audio = s.transport.audio
        isPlaying = s.transport.session.isPlaying
        intendsPlayback = s.transport.session.intendsPlayback
        soundID = s.transport.selectedSound.id
        volume = s.volume.level
        broker = s.link.broker
        mqttConnected = s.link.mqttConnected
        sessionWithheld = s.publishing.sessionWithheld
    }

    /// One line for `systemctl status`: what plays, the level, the outputs.
    var text: String {
        var parts: [String] = []
        let sound = "\"\(soundID)\""
        if audio == .unavailable {
            parts.append("audio output unavailable" + (intendsPlayback ? " (will resume \(sound))" : ""))
        } else if isPlaying {
            parts.append("playing \(sound)")
        } else {
            parts.append(intendsPlayback ? "starting \(sound)" : "idle (\(sound) selected)")
        }
        if case .absolute(let level) = volume { parts.append("level \(Int((level * 100).rounded()))%") }
        parts.append(broker.statusText(connected: mqttConnected))
        if let withheld = sessionWithheld { parts.append("session NOT published: \(withheld)") }
        return parts.joined(separator: ", ")
    }
}

extension SpeakerState {
    /// One line for `systemctl status`: what plays, the level, the outputs.
    public var statusText: String { StatusInputs(self).text }
}
