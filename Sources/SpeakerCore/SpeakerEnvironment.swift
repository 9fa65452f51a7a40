// SPDX-License-Identifier: Apache-2.0
/// A wall-clock reading (CLOCK_REALTIME): seconds and milliseconds since the Unix epoch.
public struct WallClockReading: Equatable, Sendable {
    public var seconds: Int64
    public var milliseconds: Int

    public init(seconds: Int64, milliseconds: Int) {
        self.seconds = seconds
        self.milliseconds = milliseconds
    }

    /// `2026-11-29T12:00:00.123Z`.
    public var iso8601: String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secOfDay = Int(seconds - days * 86_400)
        let date = CivilDate(days: days)
        let (year, month, day) = (Int64(date.year), Int64(date.month), Int64(date.day))
        if (0...9999).contains(year) && (0...999).contains(milliseconds) {
            // The usual case, digit by digit into one small string: it is
            // formatted for every `session` publication, i.e. on every command.
            let fields: [(value: Int64, width: Int, separator: UInt8)] = [
                (year, 4, UInt8(ascii: "-")), (month, 2, UInt8(ascii: "-")), (day, 2, UInt8(ascii: "T")),
                (Int64(secOfDay / 3600), 2, UInt8(ascii: ":")), (Int64(secOfDay / 60 % 60), 2, UInt8(ascii: ":")),
                (Int64(secOfDay % 60), 2, UInt8(ascii: ".")), (Int64(milliseconds), 3, UInt8(ascii: "Z"))]
            return String(unsafeUninitializedCapacity: 24) { buffer in
                var end = 0
                for field in fields {
                    var rest = field.value
                    for index in stride(from: end + field.width - 1, through: end, by: -1) {
                        buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                        rest /= 10
                    }
                    buffer[end + field.width] = field.separator
                    end += field.width + 1
                }
                return end
            }
        }
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(Int64(secOfDay / 3600), 2)):"
            + "\(pad(Int64(secOfDay / 60 % 60), 2)):\(pad(Int64(secOfDay % 60), 2)).\(pad(Int64(milliseconds), 3))Z"
    }
}

/// The core's dependencies on the world, injected (live values in the
/// executable, fixed ones in tests). Called only from the core's thread.
public struct SpeakerEnvironment: Sendable {
    /// Reads the wall clock (for `updatedAt`).
    public var wallClock: @Sendable () -> WallClockReading
    /// Whether the wall clock is NTP-synchronised (for `clockSynced`).
    public var clockSynced: @Sendable () -> Bool
    /// A fresh opaque session id (a UUID in the live environment).
    public var newSessionID: @Sendable () -> String
    /// `ambient-speaker 0.1.0`.
    public var software: String
    /// A uniformly random integer in the range, for jitter (the delay before
    /// Home Assistant discovery is re-sent). Tests pass a fixed draw.
    public var randomInt: @Sendable (ClosedRange<Int>) -> Int

    /// `randomInt` defaults to the system's random number generator (the live value).
    public init(wallClock: @escaping @Sendable () -> WallClockReading, clockSynced: @escaping @Sendable () -> Bool,
                newSessionID: @escaping @Sendable () -> String, software: String,
                randomInt: @escaping @Sendable (ClosedRange<Int>) -> Int = { Int.random(in: $0) }) {
        self.wallClock = wallClock
        self.clockSynced = clockSynced
        self.newSessionID = newSessionID
        self.software = software
        self.randomInt = randomInt
    }
}
