// SPDX-License-Identifier: Apache-2.0
/// A gesture recognised on one push button.
public enum ButtonGesture: String, Equatable, Sendable {
    /// Pressed and released before `longPressMs`.
    case press
    /// Held past `longPressMs`; fires once, while still held.
    case long
    /// Two presses within `doublePressMs` (only when double press is enabled).
    case double
    /// The press has begun (only with `Timing.reportsDown`): once per press, at
    /// the first edge + `confirmNs` if the line is still active then, else when
    /// the debounce accepts the press. For the core to act before the release;
    /// never published (the gestures above are the contract).
    case down
}

/// Debounces one button's raw edges and recognises gestures, driven only by
/// edge timestamps and `advance(to:)` — no clock of its own, so tests feed
/// exact timings and the simulated and real boards behave the same.
///
/// Debounce is *integrating*: a new level counts only after it has been stable
/// for `debounce`; the accepted change is dated at the last raw edge of the
/// burst. Contact bounce therefore yields exactly one transition, and a short
/// spike (EMI) yields none.
public struct ButtonDecoder: Equatable, Sendable {
    public struct Timing: Equatable, Sendable {
        public var debounceNs: UInt64
        public var longPressNs: UInt64
        /// 0 disables double press.
        public var doublePressNs: UInt64
        /// Whether to emit `.down` when a press begins.
        public var reportsDown: Bool
        /// How long after a press's first edge (from an idle line) the line must
        /// still be active for `.down`: the debounce, at most 5 ms. Rejects
        /// spikes shorter than that; contact bounce (sub-millisecond flips) has
        /// settled by then. Presses that fail it get `.down` from the debounce.
        public var confirmNs: UInt64 { min(debounceNs, 5_000_000) }

        public init(debounceMs: Int, longPressMs: Int, doublePressMs: Int, reportsDown: Bool = false) {
            debounceNs = UInt64(max(0, debounceMs)) * 1_000_000
            longPressNs = UInt64(max(1, longPressMs)) * 1_000_000
            doublePressNs = UInt64(max(0, doublePressMs)) * 1_000_000
            self.reportsDown = reportsDown
        }
    }

    public let timing: Timing
    /// Last raw level seen and when it arrived.
    private var rawLevel = false
    private var rawSince: MonotonicInstant?
    /// The debounced level.
    public private(set) var isPressed = false
    private var pressedAt: MonotonicInstant?
    private var longFired = false
    /// A press waiting to see whether a second one makes it a double.
    private var pendingSingleUntil: MonotonicInstant?
    /// The first edge of a press from an idle line, waiting for `confirmNs`.
    private var downCandidate: MonotonicInstant?
    /// `.down` was emitted for the current press.
    private var downReported = false

    public init(timing: Timing) { self.timing = timing }

    /// The next instant at which `advance(to:)` has work to do, if any.
    public var nextDeadline: MonotonicInstant? {
        var d: [MonotonicInstant] = []
        if let since = rawSince, rawLevel != isPressed { d.append(since.advanced(byNanoseconds: timing.debounceNs)) }
        if isPressed, !longFired, let at = pressedAt { d.append(at.advanced(byNanoseconds: timing.longPressNs)) }
        if let until = pendingSingleUntil { d.append(until) }
        if let first = downCandidate { d.append(first.advanced(byNanoseconds: timing.confirmNs)) }
        return d.min()
    }

    /// Feeds one raw edge; returns the gestures completed up to and including it.
    public mutating func edge(isActive: Bool, at time: MonotonicInstant) -> [ButtonGesture] {
        var out = advance(to: time)
        if timing.reportsDown, isActive, !rawLevel, !isPressed, downCandidate == nil,
           rawSince.map({ $0.advanced(byNanoseconds: timing.debounceNs) <= time }) ?? true {
            // The first edge of a press from a line idle for a whole debounce.
            downReported = false
            downCandidate = time
        }
        rawLevel = isActive
        rawSince = time
        if timing.debounceNs == 0 { out += settle(at: time) }
        return out
    }

    /// Processes every deadline up to `now` (debounce settling, long press, double-press window).
    public mutating func advance(to now: MonotonicInstant) -> [ButtonGesture] {
        var out: [ButtonGesture] = []
        while let deadline = nextDeadline, deadline <= now {
            if let since = rawSince, rawLevel != isPressed, since.advanced(byNanoseconds: timing.debounceNs) == deadline {
                out += settle(at: since)
            } else if isPressed, !longFired, let at = pressedAt, at.advanced(byNanoseconds: timing.longPressNs) == deadline {
                if pendingSingleUntil != nil { pendingSingleUntil = nil; out.append(.press) }
                longFired = true
                out.append(.long)
            } else if pendingSingleUntil == deadline {
                pendingSingleUntil = nil
                out.append(.press)
            } else if let first = downCandidate, first.advanced(byNanoseconds: timing.confirmNs) == deadline {
                downCandidate = nil
                if rawLevel && !downReported {
                    downReported = true
                    out.append(.down)
                }
            } else {
                break
            }
        }
        return out
    }

    /// Accepts the raw level as the debounced level, dated `time`.
    private mutating func settle(at time: MonotonicInstant) -> [ButtonGesture] {
        guard rawLevel != isPressed else { return [] }
        isPressed = rawLevel
        if isPressed {
            pressedAt = time
            longFired = false
            downCandidate = nil
            guard timing.reportsDown, !downReported else { return [] }
            downReported = true
            return [.down]
        }
        pressedAt = nil
        downReported = false
        if longFired { return [] }
        guard timing.doublePressNs > 0 else { return [.press] }
        if pendingSingleUntil != nil {
            pendingSingleUntil = nil
            return [.double]
        }
        pendingSingleUntil = time.advanced(byNanoseconds: timing.doublePressNs)
        return []
    }
}
