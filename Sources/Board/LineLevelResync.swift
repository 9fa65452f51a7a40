// SPDX-License-Identifier: Apache-2.0
import SpeakerCore

/// Turns one drain of one line's kernel queue into ``LineEdge``s, and puts the
/// line's level right when that drain may have lost edges.
///
/// Why: the kernel queues a bounded number of edges per request — 16 with the
/// v1 uAPI, which then drops the **newest** ones; 1024 with v2, which drops the
/// oldest and says so in `lost`. After a drop the last edge read may not carry
/// the line's real level, and the quadrature decoder would stay a phase behind
/// until the line happens to move again. So when a drain may have lost edges
/// (v1: it read at least a whole queue; v2: `lost` > 0) the reader thread
/// re-reads the line, and where the level disagrees with the last edge this
/// adds one edge with the real level, dated at the re-read. The detents lost
/// inside the gap cannot be recovered (HIL traces: the kernel's edge *types*
/// were always right; every miscount was a dropped run of edges), which is why
/// ``EdgeReaderThread`` drains the queues at real-time priority.
///
/// Pure (no clock, no I/O): the caller passes the re-read level and its time.
public struct LineLevelResync: Equatable, Sendable {
    /// One edge as the kernel reported it (its type and its timestamp).
    public struct Event: Equatable, Sendable {
        public var isActive: Bool
        public var at: UInt64
        /// Edges the kernel said it dropped just before this one (v2 only).
        public var lost: UInt32

        public init(isActive: Bool, at: UInt64, lost: UInt32 = 0) {
            self.isActive = isActive
            self.at = at
            self.lost = lost
        }
    }

    private var levels: [InputLine: Bool] = [:]
    /// Edges added from a re-read so far (each one follows lost edges).
    public private(set) var resyncs = 0

    public init() {}

    /// Whether a drain that read `events` may have lost edges, so that the
    /// caller should re-read the line: a whole queue read at once (the queue
    /// was full; v1 drops silently) or a reported gap (v2).
    public static func mayHaveLost(_ events: [Event], queueSize: Int) -> Bool {
        events.count >= queueSize || events.contains { $0.lost > 0 }
    }

    /// The edges of one drain of `line`, plus one edge at `rereadAt` when
    /// `reread` (the line's level read after the drain) disagrees with the
    /// level those edges leave.
    public mutating func edges(line: InputLine, events: [Event], reread: Bool? = nil, rereadAt: UInt64 = 0) -> [LineEdge] {
        var out = events.map { LineEdge(line: line, isActive: $0.isActive, at: MonotonicInstant(nanoseconds: $0.at)) }
        if let last = events.last { levels[line] = last.isActive }
        if let reread, levels[line] != reread {
            levels[line] = reread
            resyncs += 1
            out.append(LineEdge(line: line, isActive: reread, at: MonotonicInstant(nanoseconds: max(rereadAt, events.last?.at ?? 0))))
        }
        return out
    }
}
