// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The input domain: the decoders of the buttons and the knob, and which
/// presses were already acted on when they began. Turns edges and deadlines
/// into what the speaker does about them (`InputIntent`), in order.
public struct InputState: Equatable, Sendable {
    public var decoders: InputDecoders
    /// Buttons whose current press was already acted on when it began (`.down`):
    /// their `.press` at the release is published but not acted on again.
    public var actedOnDown: Set<TransportButton> = []

    init(decoders: InputDecoders) { self.decoders = decoders }
}

/// What an input asks of the speaker.
enum InputIntent: Equatable {
    /// Publish this on `event`.
    case publish(InputEventPayload)
    /// Apply a button's default action (hardware.md, "Inputs").
    case command(Command, button: TransportButton, gesture: ButtonGesture)
    /// Move the volume by knob steps (after acceleration).
    case volumeSteps(Int)
    /// The encoder switch's long press: the sleep timer's next choice.
    case sleepTimerCycle
    /// The encoder switch's double press: mute or unmute.
    case muteToggle
}

extension InputState {
    /// Decodes one edge.
    mutating func edge(_ edge: LineEdge, config: InputsSection) -> [InputIntent] {
        decoders.edge(edge).flatMap { intents(for: $0, config: config) }
    }

    /// Runs the decoders' deadlines up to `now`.
    mutating func advance(to now: MonotonicInstant, config: InputsSection) -> [InputIntent] {
        decoders.advance(to: now).flatMap { intents(for: $0, config: config) }
    }

    /// A decoded input: published on `event`, then its default action. A
    /// press acts when it begins (`.down`) unless double press is enabled
    /// (the press may be half of a double): next, previous and the encoder
    /// switch mean nothing else when held; play/pause toggles at once too —
    /// while playing it pauses (a long press then stops, and the fade-out
    /// under way is what stop sounds like); while paused it plays, and a long
    /// press still means stop (the session ends with stop's fade-out, so the
    /// hold is heard as a short swell). The common short press acts a whole
    /// press sooner; its release then only publishes `press`. The encoder's
    /// switch is the exception: it acts on release (press = toggle), as its
    /// hold cycles the sleep timer and its double press (when enabled) mutes.
    private mutating func intents(for event: InputEvent, config: InputsSection) -> [InputIntent] {
        switch event {
        case let .button(button, .down):
            // The encoder's switch acts on release: its hold is the sleep timer's gesture.
            guard config.doublePressMs == 0, button != .encoderSwitch else {
                actedOnDown.remove(button)
                return []
            }
            actedOnDown.insert(button)
            return Self.action(button, .press).map { [.command($0, button: button, gesture: .press)] } ?? []
        case let .button(button, gesture):
            var intents: [InputIntent] = [.publish(.button(name: button.rawValue, gesture: gesture.rawValue))]
            let acted = actedOnDown.remove(button) != nil
            if gesture == .press && acted { return intents }
            if button == .encoderSwitch && gesture == .long { return intents + [.sleepTimerCycle] }
            if button == .encoderSwitch && gesture == .double { return intents + [.muteToggle] }
            if let command = Self.action(button, gesture) { intents.append(.command(command, button: button, gesture: gesture)) }
            return intents
        case let .knob(detents, steps):
            return [.publish(.knob(delta: detents)), .volumeSteps(steps)]
        }
    }

    /// The default action of `gesture` on `button`, if it has one.
    private static func action(_ button: TransportButton, _ gesture: ButtonGesture) -> Command? {
        switch (button, gesture) {
        case (.playPause, .press), (.encoderSwitch, .press): return .toggle
        case (.playPause, .long): return .stop
        case (.next, .press): return .next
        case (.previous, .press): return .previous
        default: return nil
        }
    }
}
