/// The session revision: strictly increasing across restarts and power cuts
/// without a disk write per change.
///
/// Revisions are reserved in blocks: before using a revision beyond the
/// reserved block, the core emits `reserveRevisions(through:)` and the runner
/// persists it before the publication that follows. After a restart the
/// counter starts at the last reservation, skipping whatever the previous run
/// reserved but did not use — never repeating one.
public struct RevisionCounter: Equatable, Sendable {
    public static let blockSize: UInt64 = 1000
    /// The last revision handed out.
    public private(set) var current: UInt64
    /// Revisions up to here are durably reserved.
    public private(set) var reservedThrough: UInt64

    /// `persistedReservation`: the last durable reservation (0 on a fresh device).
    public init(persistedReservation: UInt64) {
        current = persistedReservation
        reservedThrough = persistedReservation
    }

    /// The next revision, plus the reservation to persist first (if any).
    public mutating func next() -> (revision: UInt64, reserve: UInt64?) {
        current += 1
        var reserve: UInt64?
        if current > reservedThrough {
            reservedThrough = current - 1 + Self.blockSize
            reserve = reservedThrough
        }
        return (current, reserve)
    }
}
