// SPDX-License-Identifier: Apache-2.0
/// A time zone's rules, read from a TZif file (RFC 8536: the bytes of
/// `/etc/localtime` or `/usr/share/zoneinfo/NAME`, read by the host and
/// handed to the core as this value), so the core converts between UTC and
/// local time itself and tests use the real zones. Pure value; any thread.
///
/// Uses the 64-bit (version 2+) data block and, past its last transition,
/// the footer's POSIX TZ rule (`CET-1CEST,M3.5.0,M10.5.0/3`), so a "slim"
/// file works as well as a "fat" one.
public struct TimeZoneRules: Equatable, Sendable {
    /// The zone's name as configured (`Europe/Berlin`), or `localtime`/`UTC`.
    public var name: String
    /// Transition instants (Unix seconds, ascending) and the UTC offset in
    /// seconds that applies from each one on.
    var transitions: [Int64] = []
    var offsets: [Int32] = []
    /// The offset before the first transition.
    var initialOffset: Int32 = 0
    /// The footer's rule for instants after the last transition (nil: the last offset holds).
    var footer: PosixTZRule?

    /// UTC, no transitions.
    public static let utc = TimeZoneRules(name: "UTC")

    init(name: String) { self.name = name }

    /// Why a TZif file could not be read.
    public struct ParseError: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Parses a TZif file's bytes (version 1 files use their 32-bit block).
    public init(name: String, tzif bytes: [UInt8]) throws(ParseError) {
        self.name = name
        var reader = TZifReader(bytes: bytes)
        let first = try reader.header()
        guard first.version >= 2 else {
            try load(&reader, header: first, timeSize: 4)
            return
        }
        try reader.skip(first.dataLength(timeSize: 4))
        let second = try reader.header()
        try load(&reader, header: second, timeSize: 8)
        // Footer: "\nTZSTRING\n".
        guard reader.remaining > 1, try reader.byte() == 0x0A else { return }
        var text: [UInt8] = []
        while reader.remaining > 0 {
            let b = try reader.byte()
            if b == 0x0A { break }
            text.append(b)
        }
        footer = PosixTZRule(String(decoding: text, as: UTF8.self))
    }

    private mutating func load(_ reader: inout TZifReader, header h: TZifHeader, timeSize: Int) throws(ParseError) {
        var times: [Int64] = []
        for _ in 0..<h.timeCount { times.append(try reader.integer(size: timeSize)) }
        var indices: [Int] = []
        for _ in 0..<h.timeCount { indices.append(Int(try reader.byte())) }
        var types: [(offset: Int32, isDST: Bool)] = []
        for _ in 0..<h.typeCount {
            let offset = Int32(truncatingIfNeeded: try reader.integer(size: 4))
            let dst = try reader.byte() != 0
            _ = try reader.byte()
            guard (-26 * 3600...26 * 3600).contains(offset) else { throw ParseError(reason: "UTC offset \(offset) s out of range") }
            types.append((offset, dst))
        }
        guard !types.isEmpty, indices.allSatisfy({ $0 < types.count }) else {
            throw ParseError(reason: "a transition names a local time type that does not exist")
        }
        guard zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw ParseError(reason: "transition times are not ascending")
        }
        try reader.skip(h.charCount + h.leapCount * (timeSize + 4) + h.stdCount + h.utCount)
        transitions = times
        offsets = indices.map { types[$0].offset }
        // RFC 8536: the first standard-time type (else type 0) applies before the first transition.
        initialOffset = (types.first(where: { !$0.isDST }) ?? types[0]).offset
    }

    /// The UTC offset in seconds in force at the Unix instant `utc`.
    public func offset(atUTC utc: Int64) -> Int {
        if let last = transitions.last, utc >= last, let footer { return footer.offset(atUTC: utc) }
        if transitions.isEmpty { return footer?.offset(atUTC: utc) ?? Int(initialOffset) }
        var low = 0, high = transitions.count  // first transition > utc
        while low < high {
            let mid = (low + high) / 2
            if transitions[mid] <= utc { low = mid + 1 } else { high = mid }
        }
        return low == 0 ? Int(initialOffset) : Int(offsets[low - 1])
    }

    /// The local wall time (seconds since 1970-01-01T00:00 local) of `utc`.
    public func local(fromUTC utc: Int64) -> Int64 { utc + Int64(offset(atUTC: utc)) }

    /// The instant at which the local wall time `local` happens, once:
    /// a time that happens twice (the repeated hour when clocks go back)
    /// gives the first; a time that does not happen (the hour skipped when
    /// clocks go forward) gives the instant the clocks jumped past it plus its
    /// distance into the gap, i.e. 02:30 in a skipped 02:00–03:00 hour is 03:30.
    public func utc(fromLocal local: Int64) -> Int64 {
        // Offsets on either side: no zone has two transitions within 36 hours.
        let before = Int64(offset(atUTC: local - 18 * 3600))
        let after = Int64(offset(atUTC: local + 18 * 3600))
        let candidates = Set([local - before, local - after]).filter { Int64(offset(atUTC: $0)) == local - $0 }
        if let first = candidates.min() { return first }
        return local - before
    }
}

/// The fixed-size header of a TZif data block.
struct TZifHeader {
    var version: Int
    var utCount, stdCount, leapCount, timeCount, typeCount, charCount: Int

    func dataLength(timeSize: Int) -> Int {
        timeCount * timeSize + timeCount + typeCount * 6 + charCount + leapCount * (timeSize + 4) + stdCount + utCount
    }
}

/// Reads big-endian integers from a TZif file, never past its end.
struct TZifReader {
    let bytes: [UInt8]
    var position = 0

    var remaining: Int { bytes.count - position }

    mutating func byte() throws(TimeZoneRules.ParseError) -> UInt8 {
        guard position < bytes.count else { throw .init(reason: "truncated at byte \(position)") }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func integer(size: Int) throws(TimeZoneRules.ParseError) -> Int64 {
        var value: UInt64 = 0
        for _ in 0..<size { value = value << 8 | UInt64(try byte()) }
        if size == 4 { return Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: value))) }
        return Int64(bitPattern: value)
    }

    mutating func skip(_ count: Int) throws(TimeZoneRules.ParseError) {
        guard count >= 0, count <= remaining else { throw .init(reason: "truncated at byte \(position)") }
        position += count
    }

    mutating func header() throws(TimeZoneRules.ParseError) -> TZifHeader {
        guard remaining >= 44, Array(bytes[position..<position + 4]) == Array("TZif".utf8) else {
            throw .init(reason: "not a TZif file (no \"TZif\" magic at byte \(position))")
        }
        position += 4
        let v = try byte()
        let version = v == 0 ? 1 : Int(v) - 0x30
        position += 15
        var counts: [Int] = []
        for _ in 0..<6 {
            let n = try integer(size: 4)
            guard (0...100_000).contains(n) else { throw .init(reason: "implausible count \(n) in the header") }
            counts.append(Int(n))
        }
        return TZifHeader(version: version, utCount: counts[0], stdCount: counts[1], leapCount: counts[2],
                          timeCount: counts[3], typeCount: counts[4], charCount: counts[5])
    }
}
