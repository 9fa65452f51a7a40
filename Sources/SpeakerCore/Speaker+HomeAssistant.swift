/// Home Assistant's status topic. This keeps the behaviour the runtime had
/// (re-send the discovery config on each `online` while discovery is on);
/// the coalesced re-send of issue 10 (branch `hacore`) replaces this file.
extension Speaker {
    mutating func homeAssistantStatus(online: Bool, at now: MonotonicInstant) {
        guard online, config.mqtt.homeAssistant.enabled else { return }
        effects.append(.log(.info, "Home Assistant is online; re-sending discovery"))
        effects.append(.publish(homeAssistantDiscovery.publication))
    }
}
