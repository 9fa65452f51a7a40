// SPDX-License-Identifier: Apache-2.0
/// A point on the monotonic clock (CLOCK_MONOTONIC), in nanoseconds.
///
/// The core never reads a clock: every instant comes in with an action, so
/// tests drive time by hand. Kernel GPIO edge timestamps use the same clock.
public struct MonotonicInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    /// Nanoseconds since an arbitrary origin (boot, for CLOCK_MONOTONIC).
    public var nanoseconds: UInt64

    /// Creates an instant from nanoseconds on the monotonic clock.
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// Creates an instant from milliseconds (convenient in tests).
    public static func milliseconds(_ ms: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: ms * 1_000_000)
    }

    /// This instant moved forward by `ns` nanoseconds.
    public func advanced(byNanoseconds ns: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: nanoseconds &+ ns)
    }

    /// This instant moved forward by `ms` milliseconds.
    public func advanced(byMilliseconds ms: Int) -> MonotonicInstant {
        advanced(byNanoseconds: UInt64(max(0, ms)) * 1_000_000)
    }

    /// Nanoseconds from `earlier` to `self` (0 when `earlier` is later).
    public func nanoseconds(since earlier: MonotonicInstant) -> UInt64 {
        nanoseconds >= earlier.nanoseconds ? nanoseconds - earlier.nanoseconds : 0
    }

    public static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Milliseconds with microseconds, e.g. `6532.006ms`.
    public var description: String {
        let micros = String(nanoseconds % 1_000_000 / 1000)
        return "\(nanoseconds / 1_000_000).\(String(repeating: "0", count: 3 - micros.count))\(micros)ms"
    }
}
