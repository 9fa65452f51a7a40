// SPDX-License-Identifier: Apache-2.0
/// An action a caller may ask for on the `command` topic.
public enum CommandAction: String, CaseIterable, Equatable, Sendable {
    case play, pause, toggle, stop, next, previous, select, setVolume, volumeUp, volumeDown
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
