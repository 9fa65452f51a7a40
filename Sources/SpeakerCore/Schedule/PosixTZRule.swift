// SPDX-License-Identifier: Apache-2.0
/// The POSIX TZ rule of a TZif footer (`EST5EDT,M3.2.0,M11.1.0`): the
/// offsets of standard and daylight time and the `Mm.w.d[/time]` dates on
/// which they change, for instants past a file's last transition. Rules of
/// the `Jn`/`n` forms (used by no current zone) are read as standard time
/// all year. Pure value.
struct PosixTZRule: Equatable, Sendable {
    /// UTC offsets in seconds (east positive, unlike the POSIX text).
    var standard: Int
    var daylight: Int?
    var start: DateRule?
    var end: DateRule?

    /// `Mm.w.d/time`: day `d` (0 = Sunday) of week `w` (5 = last) of month `m`, at `seconds` local.
    struct DateRule: Equatable, Sendable {
        var month: Int, week: Int, weekday: Int, seconds: Int

        /// The local time (seconds since 1970 in local wall time) of this rule in `year`.
        func local(inYear year: Int) -> Int64 {
            let first = CivilDate.days(year: year, month: month, day: 1)
            let firstWeekday = Int((first + 4) % 7 + 7) % 7  // 1970-01-01 was a Thursday (4)
            var day = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let length = CivilDate.daysInMonth(year: year, month: month)
            while day > length { day -= 7 }
            return (first + Int64(day - 1)) * 86_400 + Int64(seconds)
        }
    }

    init?(_ text: String) {
        var s = Substring(text)
        guard Self.name(&s), let std = Self.offset(&s) else { return nil }
        standard = -std
        if s.isEmpty { return }
        guard Self.name(&s) else { return nil }
        var dst = standard + 3600
        if let first = s.first, first != "," { guard let o = Self.offset(&s) else { return nil }; dst = -o }
        daylight = dst
        guard s.first == "," else { return nil }
        s.removeFirst()
        guard let a = Self.dateRule(&s), s.first == "," else { daylight = nil; return }
        s.removeFirst()
        guard let b = Self.dateRule(&s) else { daylight = nil; return }
        start = a
        end = b
    }

    /// The offset at the Unix instant `utc`.
    func offset(atUTC utc: Int64) -> Int {
        guard let daylight, let start, let end else { return standard }
        let year = CivilDate(days: (utc + Int64(standard)) / 86_400 - ((utc + Int64(standard)) % 86_400 < 0 ? 1 : 0)).year
        let begins = start.local(inYear: year) - Int64(standard)
        let ends = end.local(inYear: year) - Int64(daylight)
        let inDST = begins < ends ? (utc >= begins && utc < ends) : (utc < ends || utc >= begins)
        return inDST ? daylight : standard
    }

    private static func name(_ s: inout Substring) -> Bool {
        if s.first == "<" {
            guard let close = s.firstIndex(of: ">") else { return false }
            s = s[s.index(after: close)...]
            return true
        }
        let letters = s.prefix { $0.isLetter }
        guard letters.count >= 3 else { return false }
        s = s.dropFirst(letters.count)
        return true
    }

    /// `[+-]hh[:mm[:ss]]` in seconds (POSIX sign).
    private static func offset(_ s: inout Substring) -> Int? {
        var sign = 1
        if s.first == "+" || s.first == "-" { sign = s.removeFirst() == "-" ? -1 : 1 }
        var total = 0
        for (index, limit) in [(0, 167), (1, 59), (2, 59)] {
            if index > 0 { guard s.first == ":" else { break }; s.removeFirst() }
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3, let n = Int(digits), n <= limit else { return nil }
            s = s.dropFirst(digits.count)
            total += n * [3600, 60, 1][index]
        }
        return sign * total
    }

    private static func dateRule(_ s: inout Substring) -> DateRule? {
        guard s.first == "M" else { return nil }
        s.removeFirst()
        let fields = s.prefix { $0 != "/" && $0 != "," }.split(separator: ".").compactMap { Int($0) }
        guard fields.count == 3, (1...12).contains(fields[0]), (1...5).contains(fields[1]), (0...6).contains(fields[2]) else { return nil }
        s = s.drop { $0 != "/" && $0 != "," }
        var seconds = 7200
        if s.first == "/" {
            s.removeFirst()
            guard let t = offset(&s) else { return nil }
            seconds = t
        }
        return DateRule(month: fields[0], week: fields[1], weekday: fields[2], seconds: seconds)
    }
}

/// A proleptic Gregorian date (days since 1970-01-01), for local-time arithmetic.
struct CivilDate: Equatable, Sendable {
    var year: Int, month: Int, day: Int

    /// Days since 1970-01-01 of a date (Howard Hinnant's days_from_civil).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = Int64(month > 2 ? month - 3 : month + 9)
        let doy = (153 * mp + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    init(year: Int, month: Int, day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` after 1970-01-01 (civil_from_days).
    init(days: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = Int(doy - (153 * mp + 2) / 5 + 1)
        month = Int(mp < 10 ? mp + 3 : mp - 9)
        year = Int(yoe + era * 400) + (month <= 2 ? 1 : 0)
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        Int(days(year: month == 12 ? year + 1 : year, month: month == 12 ? 1 : month + 1, day: 1) - days(year: year, month: month, day: 1))
    }

    /// Monday = 0 … Sunday = 6, of the day `days` after 1970-01-01 (a Thursday).
    static func weekday(days: Int64) -> Int { Int(((days + 3) % 7 + 7) % 7) }
}
