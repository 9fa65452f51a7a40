// SPDX-License-Identifier: Apache-2.0
/// An action a caller may ask for on the `command` topic.
public enum CommandAction: String, CaseIterable, Equatable, Sendable {
    case play, pause, toggle, stop, next, previous, select, setVolume, volumeUp, volumeDown
    case setSchedules, setScheduleEnabled, setNightCap
    case saveMix, deleteMix, setLayerLevel
    case setSleepTimer, cancelSleepTimer, mute, unmute
}

/// A decoded, well-formed command (mqtt-contract.md, "command"). Whether it can
/// be applied (known sound, volume capability, audio state) is the core's call.
public enum Command: Equatable, Sendable {
    case play, pause, toggle, stop, next, previous
    case select(soundID: String)
    /// `level` is finite; clamping to [0, maxLevel] happens in the core.
    case setVolume(level: Double)
    /// `steps` is in 1...20.
    case volumeUp(steps: Int)
    case volumeDown(steps: Int)
    /// `minutes` in 1...720; `fadeSeconds` in 0...1800 or nil (the config's default).
    case setSleepTimer(minutes: Int, fadeSeconds: Int?)
    case cancelSleepTimer
    case mute, unmute
    /// The rules as sent (the core validates them with the config's rule parser).
    case setSchedules(JSONValue)
    /// `index` is a whole number ≥ 0 (the core checks it names a rule).
    case setScheduleEnabled(index: Int, enabled: Bool)
    /// The cap as sent (`null` = none; the core validates it like `volume.night`).
    case setNightCap(JSONValue)
    /// Create or replace a mix (well formed; whether its sounds exist is the core's call).
    case saveMix(MixDefinition)
    case deleteMix(mixID: String)
    /// `level` is finite; the range check is the decoder's, the layer the core's.
    case setLayerLevel(soundID: String, level: Double)

    /// The contract's action name.
    public var action: CommandAction {
        switch self {
        case .play: return .play
        case .pause: return .pause
        case .toggle: return .toggle
        case .stop: return .stop
        case .next: return .next
        case .previous: return .previous
        case .select: return .select
        case .setVolume: return .setVolume
        case .volumeUp: return .volumeUp
        case .volumeDown: return .volumeDown
        case .setSleepTimer: return .setSleepTimer
        case .cancelSleepTimer: return .cancelSleepTimer
        case .mute: return .mute
        case .unmute: return .unmute
        case .setSchedules: return .setSchedules
        case .setScheduleEnabled: return .setScheduleEnabled
        case .setNightCap: return .setNightCap
        case .saveMix: return .saveMix
        case .deleteMix: return .deleteMix
        case .setLayerLevel: return .setLayerLevel
        }
    }
}

/// A command with the caller's correlation id.
public struct CommandEnvelope: Equatable, Sendable {
    public var id: String
    public var command: Command

    public init(id: String, command: Command) {
        self.id = id
        self.command = command
    }
}
