// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The broker domain: whether the MQTT link is up, the broker's health
/// (why it is down, takeovers), and when the Home Assistant discovery config
/// is re-sent.
///
/// The discovery config goes out:
/// - at connect, first of all (before `device`, `catalog`, `session` and
///   `availability`), so Home Assistant knows what the device is before it
///   reads state that depends on it; also at `.start`, before the first
///   state: the link can be connected before its `.mqttConnected` reaches
///   the core, and then whatever the core publishes goes out at once;
/// - on a reload that changes it (`Speaker+Reconfigure`), before the state
///   that shows the change;
/// - when Home Assistant announces itself with `online` on `{haPrefix}/status`
///   (its birth message after a restart): once per burst. The first `online`
///   schedules one re-send after a random delay in `homeAssistantResendDelayMs`
///   (Home Assistant recommends a random delay, so that its restart does not
///   meet every device at once); every further `online` until then is folded
///   into it. A reconnect in the meantime sends the config anyway and
///   cancels the pending re-send.
public struct LinkState: Equatable, Sendable {
    public var mqttConnected = false
    /// Why the broker connection is down, and takeover detection.
    public var broker = BrokerHealth()
    /// When the Home Assistant discovery config is re-sent after Home
    /// Assistant's `online`, or nil when no re-send is due.
    public var homeAssistantResendAt: MonotonicInstant?
    /// What the discovery config last sent describes (a command that changes
    /// it re-sends the config: `Speaker.resendDiscoveryIfChanged`).
    var discoveryInputsSent: DiscoveryInputs?

    /// The range of the random delay before a re-send, in milliseconds.
    public static let homeAssistantResendDelayMs = 500...3000

    init() {}

    /// Home Assistant's status: `online` schedules one re-send unless one is
    /// already waiting; `offline` and anything else change nothing.
    mutating func homeAssistantStatus(online: Bool, enabled: Bool, randomInt: (ClosedRange<Int>) -> Int,
                                      at now: MonotonicInstant) -> [SpeakerEffect] {
        guard online, enabled, homeAssistantResendAt == nil else { return [] }
        let range = Self.homeAssistantResendDelayMs
        let delay = min(max(randomInt(range), range.lowerBound), range.upperBound)
        homeAssistantResendAt = now.advanced(byMilliseconds: delay)
        return [.log(.info, "Home Assistant is online; re-sending discovery in \(delay) ms")]
    }

    /// Whether the scheduled re-send is due now (it is then no longer
    /// scheduled). Not connected, or discovery switched off meanwhile: it is
    /// dropped, since the next connect sends the config first anyway.
    mutating func discoveryResendDue(at now: MonotonicInstant, enabled: Bool) -> Bool {
        guard let due = homeAssistantResendAt, due <= now else { return false }
        homeAssistantResendAt = nil
        return mqttConnected && enabled
    }

    /// The discovery config is going out now, describing `inputs`: any
    /// re-send waiting is this one.
    mutating func discoverySent(_ inputs: DiscoveryInputs) {
        homeAssistantResendAt = nil
        discoveryInputsSent = inputs
    }
}
