// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What Home Assistant discovery takes from the domains, and its re-send
/// when a command changes what it describes.
///
/// Discovery depends on the catalog (the sound select's options: `saveMix`
/// and `deleteMix` change it) and on `HomeAssistantBedside` (the schedule
/// rules that exist, the night cap's window). A command that changes either
/// re-sends the config at once, before the `catalog`/`session`/`schedules`
/// that show the change, so Home Assistant gains the new rule's switch or
/// the new mix's option together with the state that uses it.
extension Speaker {
    /// The bedside features as discovery shows them now.
    var homeAssistantBedside: HomeAssistantBedside {
        let absolute: Bool
        if case .absolute = state.volume.level { absolute = true } else { absolute = false }
        let cap = (state.schedule.nightCap ?? config.volume.night).map {
            HomeAssistantBedside.NightCap(from: ScheduleRule.clockText($0.from), to: ScheduleRule.clockText($0.to),
                                          maxLevel: $0.maxLevel)
        }
        return HomeAssistantBedside(scheduleCount: state.schedule.rules.count, nightCapAvailable: absolute,
                                    nightCap: cap ?? HomeAssistantBedside.fallbackNightCap(maxLevel: config.volume.maxLevel))
    }

    /// What a command can change of the discovery config (the configuration
    /// changes only by a reload, which compares the whole config).
    var discoveryInputs: DiscoveryInputs {
        DiscoveryInputs(catalog: state.transport.catalog, bedside: homeAssistantBedside)
    }

    /// The discovery config again when what it describes is no longer what
    /// was last sent, discovery is on and the broker is connected (offline,
    /// the next connect sends it first). Compared with the last config sent,
    /// not the state before the command, so a domain that sent it already
    /// (a mix saved) causes no second one.
    mutating func resendDiscoveryIfChanged() -> [SpeakerEffect] {
        guard config.mqtt.homeAssistant.enabled, state.link.mqttConnected,
              discoveryInputs != state.link.discoveryInputsSent else { return [] }
        return publishDiscovery()
    }
}

/// The parts of the discovery config that commands can change.
struct DiscoveryInputs: Equatable, Sendable {
    var catalog: [CatalogEntry]
    var bedside: HomeAssistantBedside
}
