// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import SpeakerPorts

/// The notifications of a systemd service (`Type=notify`): readiness, the
/// watchdog, `STATUS=` text, reload and stop, sent through the systemd port
/// (``SystemdNotify``); with systemd not listening every call is a no-op.
/// Used by ``SystemdService``. Loop thread only.
public final class SystemdNotifications {
    private let port: any SystemdNotify
    private var lastStatus: String?
    /// The last reload's error, shown in `STATUS=` until a reload succeeds.
    public var reloadError: String? {
        didSet { if let lastStatus { update(status: lastStatus, force: true) } }
    }

    public init(_ port: any SystemdNotify) {
        self.port = port
    }

    /// How often to ping the watchdog, in milliseconds; nil when it is off.
    public var watchdogPingMs: Int? { port.watchdogPingMs }

    /// Logs how the service talks to systemd (once, at start).
    public func logConfiguration() { port.logConfiguration() }

    /// Whether systemd listens (`$NOTIFY_SOCKET` was usable).
    public var isActive: Bool { port.isActive }

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
        guard port.isActive else { return }
        port.notify(message)
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
