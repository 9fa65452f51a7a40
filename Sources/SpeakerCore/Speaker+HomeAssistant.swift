import SpeakerProtocol

/// When the Home Assistant discovery config goes out.
///
/// - At connect, first of all (before `device`, `catalog`, `session` and
///   `availability`), so Home Assistant knows what the device is before it
///   reads state that depends on it. Also at `.start`, before the first
///   state: the MQTT link can be connected before its `.mqttConnected`
///   reaches the core, and then whatever the core publishes goes out at once
///   (while it is not connected, the link drops publications).
/// - On a reload that changes it (`Speaker+Reconfigure`), before the state
///   that shows the change.
/// - When Home Assistant announces itself with `online` on
///   `{haPrefix}/status` (its birth message after a restart): once per
///   burst. The first `online` schedules one re-send after a random delay
///   of `homeAssistantResendDelayMs` (Home Assistant recommends a random
///   delay, so that a restart does not meet every device at once); every
///   further `online` until then is folded into it. A burst of 1,000
///   `online` messages gives one 5 KB re-send, not 1,000. A reconnect in the
///   meantime sends the config anyway and cancels the pending re-send.
extension Speaker {
    /// The range of the random delay before a re-send, in milliseconds.
    public static let homeAssistantResendDelayMs = 500...3000

    /// The discovery config for the running configuration (see `HomeAssistantDiscovery`).
    public var homeAssistantDiscovery: HomeAssistantDiscovery {
        HomeAssistantDiscovery(config: config, catalog: state.catalog, volume: state.volume, software: environment.software)
    }

    /// Publishes the discovery config (or its removal when disabled) and
    /// drops any re-send that was waiting: this is it.
    mutating func publishDiscovery() {
        state.homeAssistantResendAt = nil
        effects.append(.publish(homeAssistantDiscovery.publication))
    }

    /// Home Assistant's status: `online` schedules one re-send unless one is
    /// already waiting; `offline` and anything else change nothing.
    mutating func homeAssistantStatus(online: Bool, at now: MonotonicInstant) {
        guard online, config.mqtt.homeAssistant.enabled else { return }
        guard state.homeAssistantResendAt == nil else { return }
        let range = Self.homeAssistantResendDelayMs
        let delay = min(max(environment.randomInt(range), range.lowerBound), range.upperBound)
        state.homeAssistantResendAt = now.advanced(byMilliseconds: delay)
        effects.append(.log(.info, "Home Assistant is online; re-sending discovery in \(delay) ms"))
    }

    /// Sends the scheduled re-send once its time has come. Not connected (or
    /// discovery switched off meanwhile): dropped, since the next connect
    /// sends the config first anyway.
    mutating func resendDiscoveryIfDue(at now: MonotonicInstant) {
        guard let due = state.homeAssistantResendAt, due <= now else { return }
        state.homeAssistantResendAt = nil
        guard state.mqttConnected, config.mqtt.homeAssistant.enabled else { return }
        publishDiscovery()
    }
}
