// SPDX-License-Identifier: Apache-2.0
/// The speaker's push buttons, named by their function.
public enum TransportButton: String, CaseIterable, Equatable, Sendable {
    case playPause, next, previous, encoderSwitch

    init?(line: InputLine) {
        switch line {
        case .playPause: self = .playPause
        case .next: self = .next
        case .previous: self = .previous
        case .encoderSwitch: self = .encoderSwitch
        case .encoderA, .encoderB: return nil
        }
    }
}

/// A decoded physical input: a button gesture or a knob movement.
public enum InputEvent: Equatable, Sendable {
    case button(TransportButton, ButtonGesture)
    /// `detents` as turned; `steps` after acceleration (equal when it is off).
    case knob(detents: Int, steps: Int)
}

/// All input decoding of the speaker: one `ButtonDecoder` per button, the
/// quadrature decoder for the knob, and knob acceleration. Fed timestamped
/// `LineEdge`s (from libgpiod or the simulated board) and deadlines; pure.
public struct InputDecoders: Equatable, Sendable {
    private var buttons: [TransportButton: ButtonDecoder]
    private var quadrature: QuadratureDecoder
    private let acceleration: Bool
    private var lastDetentAt: MonotonicInstant?
    private var lastDirection = 0

    public init(config: InputsSection) {
        let timing = ButtonDecoder.Timing(debounceMs: config.debounceMs, longPressMs: config.longPressMs,
                                          doublePressMs: config.doublePressMs, reportsDown: true)
        var buttons: [TransportButton: ButtonDecoder] = [:]
        for button in TransportButton.allCases where button != .encoderSwitch || config.encoderSwitch != nil {
            buttons[button] = ButtonDecoder(timing: timing)
        }
        self.buttons = buttons
        quadrature = QuadratureDecoder(stepsPerDetent: config.encoder.stepsPerDetent)
        acceleration = config.encoder.acceleration
    }

    /// The earliest instant at which `advance(to:)` has work to do.
    public var nextDeadline: MonotonicInstant? { buttons.values.compactMap(\.nextDeadline).min() }

    /// Decodes one edge into zero or more input events.
    public mutating func edge(_ edge: LineEdge) -> [InputEvent] {
        var events = advance(to: edge.at)
        if let button = TransportButton(line: edge.line) {
            guard var decoder = buttons[button] else { return events }
            events += decoder.edge(isActive: edge.isActive, at: edge.at).map { .button(button, $0) }
            buttons[button] = decoder
        } else {
            let detent = quadrature.edge(phaseA: edge.line == .encoderA, isActive: edge.isActive)
            if detent != 0 { events.append(.knob(detents: detent, steps: detent * multiplier(detent, at: edge.at))) }
        }
        return events
    }

    /// Runs every button deadline up to `now` (debounce, long press, double press).
    public mutating func advance(to now: MonotonicInstant) -> [InputEvent] {
        var events: [InputEvent] = []
        for button in TransportButton.allCases {
            guard var decoder = buttons[button], let d = decoder.nextDeadline, d <= now else { continue }
            events += decoder.advance(to: now).map { .button(button, $0) }
            buttons[button] = decoder
        }
        return events
    }

    /// Acceleration: detents in the same direction less than 50 ms apart count
    /// double, less than 20 ms apart four-fold.
    private mutating func multiplier(_ direction: Int, at time: MonotonicInstant) -> Int {
        defer { lastDetentAt = time; lastDirection = direction }
        guard acceleration, let last = lastDetentAt, lastDirection == direction else { return 1 }
        let gap = time.nanoseconds(since: last)
        if gap < 20_000_000 { return 4 }
        if gap < 50_000_000 { return 2 }
        return 1
    }
}
