// SPDX-License-Identifier: Apache-2.0
/// What the status LED shows. The core picks the pattern; the board drives
/// the line through it (`SpeakerEffect.statusLed`), timed on the event loop.
public enum StatusLedPattern: Equatable, Sendable {
    /// Dark: idle (paused or no session).
    case off
    /// Lit: playing.
    case on
    /// Slow on/off, 1.5 s lit and 1.5 s dark: a sleep timer runs.
    case breathing
    /// `count` blinks (200 ms lit, 300 ms dark), once: a sleep timer choice (1 = 15 min … 4 = 90 min).
    case blinks(Int)
    /// One long blink (1.2 s), once: the sleep timer is off.
    case longBlink
    /// Fast blink, 100 ms lit and 100 ms dark: a problem (audio unavailable,
    /// the broker unreachable for more than a minute, `session` withheld).
    case fastBlink

    /// How long a one-shot pattern lasts (nil: it repeats until replaced),
    /// including its dark lead-in and a dark pause after it so the count is readable.
    public var durationMs: Int? {
        switch self {
        case .blinks(let n): return leadInMs + max(1, n) * 500 + 500
        case .longBlink: return leadInMs + 1200 + 500
        case .off, .on, .breathing, .fastBlink: return nil
        }
    }

    /// Dark before a one-shot pattern's first span: a confirmation often
    /// begins while the LED is lit (playing, breathing), and without a gap
    /// its first blink would merge with that light and the count read one short.
    public var leadInMs: Int {
        switch self {
        case .blinks, .longBlink: return 400
        case .off, .on, .breathing, .fastBlink: return 0
        }
    }

    /// The pattern as alternating lit/dark spans in ms, starting lit (`[]`: a
    /// steady level, `isLit`), after `leadInMs` dark. A repeating pattern
    /// loops over its spans.
    public var spansMs: [Int] {
        switch self {
        case .off, .on: return []
        case .breathing: return [1500, 1500]
        case .blinks(let n): return Array(repeating: [200, 300], count: max(1, n)).flatMap { $0 }.dropLast() + [800]
        case .longBlink: return [1200, 500]
        case .fastBlink: return [100, 100]
        }
    }

    /// The level of a steady pattern.
    public var isLit: Bool { self == .on }
}

/// The status LED domain: the facts it shows and the one-shot confirmation
/// under way. `pattern(...)` picks, in order: a confirmation, a problem,
/// a running sleep timer, playing, idle.
public struct StatusLightState: Equatable, Sendable {
    /// The broker counts as unreachable once it has been down this long.
    public static let brokerGraceMs = 60_000

    /// The confirmation shown now and when it ends.
    var confirmation: (pattern: StatusLedPattern, until: MonotonicInstant)?
    /// Since when the broker has been down (nil: connected).
    var brokerDownSince: MonotonicInstant?
    /// The broker's grace has passed while it is down (shown as a problem).
    var brokerLost = false
    /// The pattern last sent to the board (nil: none yet).
    var shown: StatusLedPattern?

    public init() {}

    public static func == (a: StatusLightState, b: StatusLightState) -> Bool {
        a.confirmation?.pattern == b.confirmation?.pattern && a.confirmation?.until == b.confirmation?.until
            && a.brokerDownSince == b.brokerDownSince && a.brokerLost == b.brokerLost && a.shown == b.shown
    }

    /// Shows `pattern` once, then returns to the state's pattern.
    mutating func confirm(_ pattern: StatusLedPattern, at now: MonotonicInstant) {
        confirmation = (pattern, now.advanced(byMilliseconds: pattern.durationMs ?? 0))
    }

    /// The broker link went down (`at`) or came up (nil).
    mutating func brokerDown(since: MonotonicInstant?) {
        if since == nil || brokerDownSince == nil { brokerDownSince = since }
        if since == nil { brokerLost = false }
    }

    /// When the pattern may change by itself (a confirmation's end, the broker's grace).
    var deadline: MonotonicInstant? {
        let grace = brokerLost ? nil : brokerDownSince?.advanced(byMilliseconds: Self.brokerGraceMs)
        return [confirmation?.until, grace].compactMap { $0 }.min()
    }

    /// The pattern for these facts at `now`.
    mutating func pattern(at now: MonotonicInstant, problem: Bool, timerRunning: Bool, playing: Bool) -> StatusLedPattern {
        if let c = confirmation {
            if now < c.until { return c.pattern }
            confirmation = nil
        }
        if let since = brokerDownSince, since.advanced(byMilliseconds: Self.brokerGraceMs) <= now { brokerLost = true }
        if problem || brokerLost { return .fastBlink }
        if timerRunning { return .breathing }
        return playing ? .on : .off
    }

    /// The effect that shows `pattern`, if it is not shown already.
    mutating func show(_ pattern: StatusLedPattern) -> [SpeakerEffect] {
        guard shown != pattern else { return [] }
        shown = pattern
        return [.statusLed(pattern)]
    }
}
