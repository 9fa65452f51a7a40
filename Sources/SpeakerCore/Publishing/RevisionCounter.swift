// SPDX-License-Identifier: Apache-2.0
/// The session revision: strictly increasing across restarts, power cuts and
/// disk faults, without a disk write per change.
///
/// Revisions are reserved in blocks: `reservationDue()` asks for the next
/// block when less than half of the current one is left, and nothing beyond
/// the durable reservation is handed out until the runner confirms a new one
/// (`reserved(through:)`). After a restart the counter starts at the last
/// reservation, skipping whatever the previous run reserved but did not use —
/// never repeating one.
///
/// When a reservation cannot be made (read-only or full state directory),
/// when the stored reservation cannot be read (no safe base), or when the
/// revision space is used up, the counter hands out nothing: the core then
/// withholds `session` rather than publish a revision that might repeat.
/// Pure value; never traps (all arithmetic is overflow-checked).
public struct RevisionCounter: Equatable, Sendable {
    public static let blockSize: UInt64 = 1000
    /// The largest revision ever handed out: 2^53 − 1, the largest integer a
    /// JSON number holds exactly (in a Double, and so in JavaScript readers).
    /// Beyond it two revisions could print as the same number. A stored
    /// reservation at or above it (only a corrupt or hostile file: at one
    /// change a second this is 285 million years) means the space is exhausted.
    public static let maximum: UInt64 = (1 << 53) - 1

    /// Where the reservation stands.
    public enum Standing: Equatable, Sendable {
        /// Revisions up to `reservedThrough` are durable.
        case reserved
        /// A reservation through this revision was asked for and not yet confirmed.
        case reserving(through: UInt64)
        /// The last reservation failed (the disk's reason); retried by the core.
        case failed(reason: String)
        /// The stored reservation could not be read: there is no safe base
        /// to count from until a readable one is provided and the speaker restarted.
        case unknown(reason: String)
        /// Every revision up to `maximum` is used: nothing can follow.
        case exhausted
    }

    /// What `next()` gives.
    public enum Next: Equatable, Sendable {
        /// Publish with this revision (it is within the durable reservation).
        case revision(UInt64)
        /// A reservation is on its way; wait for its confirmation.
        case waiting
        /// No revision can be handed out, for this reason.
        case unavailable(reason: String)
    }

    /// The opaque id of this run of the counter (`device.epoch`): made when
    /// the state directory holds no reservation, i.e. exactly when the
    /// counter starts over at 0, and kept beside the reservation, so a
    /// reader that sees it change resets its revision watermark.
    public let epoch: String
    /// The last revision handed out.
    public private(set) var current: UInt64
    /// Revisions up to here are durably reserved.
    public private(set) var reservedThrough: UInt64
    public private(set) var standing: Standing

    /// `persistedReservation`: the last durable reservation (0 on a fresh
    /// device); `epoch`: the id of this run of the counter (see `epoch`).
    public init(persistedReservation: UInt64, epoch: String) {
        self.epoch = epoch
        current = persistedReservation
        reservedThrough = persistedReservation
        standing = persistedReservation >= Self.maximum ? .exhausted : .reserved
    }

    /// A counter whose stored reservation could not be read (`reason` says
    /// why): it hands out no revision at all.
    public init(unreadableReservation reason: String, epoch: String) {
        self.epoch = epoch
        current = 0
        reservedThrough = 0
        standing = .unknown(reason: reason)
    }

    /// Why no revision can be handed out now, or nil when one can (or will,
    /// once a reservation on its way is confirmed).
    public var unavailableReason: String? {
        if case .unknown(let reason) = standing { return "the stored revision reservation is unusable: \(reason)" }
        if standing == .exhausted || current >= Self.maximum {
            return "the revision space is exhausted (at \(current); the largest is \(Self.maximum))"
        }
        if case .failed(let reason) = standing, current >= reservedThrough { return "cannot reserve session revisions: \(reason)" }
        return nil
    }

    /// A reservation to persist now, if one is due: when less than half a
    /// block is left, the next block is reserved ahead of need, so a disk
    /// fault is found while revisions remain and the speaker can refuse
    /// commands *before* applying them rather than after. Marks it on its way.
    public mutating func reservationDue() -> UInt64? {
        guard standing == .reserved, reservedThrough < Self.maximum,
              reservedThrough - min(current, reservedThrough) < Self.blockSize / 2 else { return nil }
        return askForNextBlock()
    }

    /// Marks a reservation one block beyond the current one (clamped to
    /// `maximum`, never overflowing) as on its way, and returns its end.
    private mutating func askForNextBlock() -> UInt64 {
        let (end, overflow) = reservedThrough.addingReportingOverflow(Self.blockSize)
        let through = overflow ? Self.maximum : min(end, Self.maximum)
        standing = .reserving(through: through)
        return through
    }

    /// The next revision, or what stands in the way of one.
    public mutating func next() -> Next {
        if let reason = unavailableReason { return .unavailable(reason: reason) }
        guard current < Self.maximum else {
            standing = .exhausted
            return .unavailable(reason: unavailableReason ?? "exhausted")
        }
        let candidate = current + 1
        if candidate <= reservedThrough {
            current = candidate
            return .revision(candidate)
        }
        return .waiting  // only while a reservation is on its way (`unavailableReason` covers the rest)
    }

    /// The runner made the reservation through `through` durable.
    public mutating func reserved(through: UInt64) {
        guard case .reserving(let asked) = standing, asked == through else { return }
        reservedThrough = max(reservedThrough, through)
        standing = .reserved
    }

    /// The runner could not make the reservation through `through` durable.
    /// What is already reserved is still handed out; nothing beyond it until
    /// a `retry()` succeeds.
    public mutating func reservationFailed(through: UInt64, reason: String) {
        guard case .reserving(let asked) = standing, asked == through else { return }
        standing = .failed(reason: reason)
    }

    /// After a failure: asks for the reservation again (the runner persists
    /// it and answers). Nil when nothing failed.
    public mutating func retry() -> UInt64? {
        guard case .failed = standing else { return nil }
        return askForNextBlock()
    }
}
