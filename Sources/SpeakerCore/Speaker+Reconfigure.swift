// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// Reloading the configuration (SIGHUP): the keys that can change while the
/// speaker runs are applied at once; every other change is reported and the
/// running value kept until a restart (devices, lines, the broker and the
/// topic root are opened once at start).
///
/// When a reload changes what Home Assistant discovery describes (the
/// device name, the volume number's `max`/`step`, discovery switched on or
/// off), the discovery config is re-sent at once, before the `device` and
/// `session` that show the change — or its empty retained payload, which
/// removes the device, when discovery was switched off.
/// `mqtt.homeAssistant.prefix` stays restart-only: it names the status topic
/// the MQTT link subscribes to at start.
extension Speaker {
    /// Key paths applied live on `.reconfigure`.
    public static let liveKeys: Set<String> = [
        "device.name",
        "volume.step", "volume.maxLevel", "volume.initialLevel",
        "audio.fadeMs", "audio.crossfadeMs",
        "session.idleTimeoutSeconds", "session.resumeOnBoot",
        "mqtt.homeAssistant.enabled",
        "sleepTimer.fadeSeconds",
        "volume.startupLevel", "volume.night", "clock.requireSync", "clock.timeZone", "schedules",
    ]

    /// The key paths (`volume.step`, `mqtt.tls`) whose resolved values differ
    /// between two configurations, in document order.
    public static func changedKeys(from old: SpeakerConfig, to new: SpeakerConfig) -> [String] {
        func diff(_ a: JSONValue, _ b: JSONValue, _ path: String, into out: inout [String]) {
            if case .object(let left) = a, case .object = b {
                for member in left {
                    let child = path.isEmpty ? member.key : "\(path).\(member.key)"
                    diff(member.value, b[member.key] ?? .null, child, into: &out)
                }
            } else if a != b {
                out.append(path)
            }
        }
        var out: [String] = []
        diff(old.json, new.json, "", into: &out)
        return out
    }

    /// Applies the live keys of `new`, keeps the running values of the rest,
    /// and logs which was which. A lower `volume.maxLevel` clamps the level
    /// now; a change that Home Assistant discovery shows re-sends it.
    mutating func reconfigure(to new: SpeakerConfig, at now: MonotonicInstant) -> [SpeakerEffect] {
        var changed = Self.changedKeys(from: config, to: new)
        if new.clock.zone != config.clock.zone && !changed.contains("clock.timeZone") { changed.append("clock.timeZone") }
        guard !changed.isEmpty else { return [.log(.notice, "configuration reloaded: nothing changed")] }
        var effects: [SpeakerEffect] = []
        let live = changed.filter { Self.liveKeys.contains($0) }
        let kept = changed.filter { !Self.liveKeys.contains($0) }
        let discoveryBefore = homeAssistantDiscovery
        config.device.name = new.device.name
        config.volume.step = new.volume.step
        config.volume.maxLevel = new.volume.maxLevel
        config.volume.initialLevel = new.volume.initialLevel
        config.audio.fadeMs = new.audio.fadeMs
        config.audio.crossfadeMs = new.audio.crossfadeMs
        config.session.idleTimeoutSeconds = new.session.idleTimeoutSeconds
        config.session.resumeOnBoot = new.session.resumeOnBoot
        config.mqtt.homeAssistant.enabled = new.mqtt.homeAssistant.enabled
        config.sleepTimer.fadeSeconds = new.sleepTimer.fadeSeconds  // for timers set from now on
        config.volume.startupLevel = new.volume.startupLevel
        config.volume.night = new.volume.night
        config.clock = new.clock
        config.schedules = new.schedules
        effects += resolveScheduleConfig(at: now)
        // Discovery before the state it describes (a new maximum, a new
        // name); offline, the next connect sends the new config first.
        let discovery = homeAssistantDiscovery
        if discovery != discoveryBefore && state.link.mqttConnected {
            effects += publishDiscovery()
        }
        if case .absolute(let level) = state.volume.level, level > config.volume.maxLevel {
            effects += applyVolume(.set(level), origin: nil).effects  // clamps to the new maximum
        }
        if !live.isEmpty {
            effects.append(.log(.notice, "configuration reloaded: applied \(live.joined(separator: ", "))"))
        }
        if !kept.isEmpty {
            effects.append(.log(.warning, "configuration reloaded: \(kept.joined(separator: ", ")) changed but cannot change "
                                + "while running; keeping the running values until a restart"))
        }
        return effects
    }
}
