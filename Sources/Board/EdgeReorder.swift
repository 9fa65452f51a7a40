// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// Puts edges from several lines back into kernel-timestamp order before the
/// decoders see them, by holding each edge for `windowNs` after its timestamp.
///
/// Why: each line has its own kernel queue, filled by its own interrupt
/// thread, so on a busy system an encoder phase's event can be queued (and
/// read) after a later event of the other phase, e.g. B's edge at
/// 10600.113 ms delivered before A's at 10600.070 ms. Sorting one read batch
/// cannot fix that; the quadrature decoder then sees the phases in the wrong
/// order and loses or reverses a detent. (The reported edge types are
/// consistent with their timestamps: kernel 6.1 takes the timestamp of the
/// latest hard interrupt and reads the level right after it in the same
/// thread run, so an event's level is the level after its dated edge.)
///
/// An edge older than one already released (later than the window) is
/// released at once: nothing can be done for it. Pure; loop thread.
public struct EdgeReorder: Equatable, Sendable {
    /// How long an edge is held after its kernel timestamp.
    public let windowNs: UInt64
    private var held: [LineEdge] = []

    public init(windowNs: UInt64) { self.windowNs = windowNs }

    /// Adds edges (any order across lines; one line's edges in kernel order).
    public mutating func add(_ edges: [LineEdge]) {
        for edge in edges {
            // After every held edge with an equal or earlier timestamp: stable per line.
            let index = held.lastIndex { $0.at <= edge.at }.map { $0 + 1 } ?? 0
            held.insert(edge, at: index)
        }
    }

    /// Removes and returns, in timestamp order, every edge whose window has passed at `now`.
    public mutating func release(now: UInt64) -> [LineEdge] {
        let count = held.prefix { $0.at.nanoseconds &+ windowNs <= now }.count
        defer { held.removeFirst(count) }
        return Array(held.prefix(count))
    }

    /// When the oldest held edge is due, or nil when none is held.
    public var nextRelease: UInt64? { held.first.map { $0.at.nanoseconds &+ windowNs } }
}
