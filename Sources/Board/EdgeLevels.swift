/// Each input line's level, derived from its event *sequence* rather than the
/// edge type the kernel reports with each event.
///
/// Why: for a line watching both edges, the kernel (gpiolib-cdev, v1 and v2
/// alike, without kernel debounce) dates an edge in its hard interrupt but
/// decides rising/falling by reading the line later, in the interrupt thread.
/// On a busy system two quick edges (an encoder phase, contact bounce) are
/// both reported with the level read after the second — two "rising" events —
/// or merged into one event. Both happened on a loaded Pi and in the HIL VM
/// (a v1 build counted 1 detent of 3).
///
/// What holds instead: every event means the line changed at least once, so
/// the level toggles per event; and a read of the line after its queue has
/// been drained is its true level. When they disagree (events were merged)
/// the read wins, and the correction is dated just after that line's last
/// event so it sorts before later edges of the other lines. Every edge this
/// produces changes exactly one line, so the quadrature decoder's count is
/// exact whatever path the levels took, as long as the final levels are right.
/// Pure; one instance per board, indexed like its inputs.
public struct EdgeLevels: Equatable, Sendable {
    public private(set) var levels: [Bool]
    private var lastEventNanos: [UInt64]

    /// `initial` holds each line's level read when it was requested.
    public init(initial: [Bool]) {
        levels = initial
        lastEventNanos = Array(repeating: 0, count: initial.count)
    }

    /// One kernel event on `line` at `nanoseconds`: the line's new level.
    public mutating func event(line: Int, at nanoseconds: UInt64) -> Bool {
        levels[line].toggle()
        lastEventNanos[line] = max(lastEventNanos[line], nanoseconds)
        return levels[line]
    }

    /// The line read `level` with its queue drained. Returns the correction's
    /// timestamp (1 ns after the line's last event) when the derived level was
    /// wrong, nil when it agreed.
    public mutating func reconcile(line: Int, read level: Bool) -> UInt64? {
        guard levels[line] != level else { return nil }
        levels[line] = level
        return lastEventNanos[line] &+ 1
    }
}
