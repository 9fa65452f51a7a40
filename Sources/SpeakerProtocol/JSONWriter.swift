// SPDX-License-Identifier: Apache-2.0
/// Compact JSON text written straight into bytes: the one place that decides
/// how the speaker writes a string, a number or a separator.
///
/// The contract's payloads write themselves through it (`write(to:)`), with
/// no `JSONValue` tree in between: building a tree per payload, walking it and
/// freeing it would cost more than the rest of the core's work per command.
/// `JSONValue.serialized()` writes through it too, so a payload's bytes
/// and the same tree's bytes cannot differ in formatting. Commas are placed
/// by the writer: call `key` before each member's value, `beginObject`/
/// `endObject` and `beginArray`/`endArray` around containers. Pure value type.
public struct JSONWriter: ~Copyable {
    /// The text is written into memory of its own (not an `Array`, whose
    /// every append checks uniqueness and capacity): each piece reserves its
    /// room once, then stores bytes; `bytes` copies the text out in one go.
    private var base: UnsafeMutablePointer<UInt8>
    private var count = 0
    private var capacity: Int
    /// A value has just been completed at the current level (the next one needs a comma).
    private var afterValue = false

    /// An empty writer with room for `capacity` bytes (one allocation for a payload that fits).
    public init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// The text written so far.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    /// Room for `n` more bytes.
    private mutating func reserve(_ n: Int) {
        guard count + n > capacity else { return }
        let grown = max(capacity * 2, count + n)
        let new = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        new.initialize(from: base, count: count)
        base.deallocate()
        base = new
        capacity = grown
    }

    private mutating func put(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    private mutating func put(_ run: UnsafeBufferPointer<UInt8>) {
        guard let start = run.baseAddress, !run.isEmpty else { return }
        reserve(run.count)
        (base + count).initialize(from: start, count: run.count)
        count += run.count
    }

    private mutating func separate() {
        if afterValue { put(UInt8(ascii: ",")) }
    }

    public mutating func beginObject() {
        separate()
        put(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func endObject() {
        put(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func beginArray() {
        separate()
        put(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func endArray() {
        put(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A member's key, followed by `:`. `name` is written as it is: the
    /// contract's member names are plain ASCII that needs no escape.
    public mutating func key(_ name: StaticString) {
        separate()
        put(UInt8(ascii: "\""))
        literal(name)
        put(UInt8(ascii: "\""))
        put(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A member's key given at run time (escaped like any string).
    public mutating func key(escaping name: String) {
        separate()
        writeString(name)
        put(UInt8(ascii: ":"))
        afterValue = false
    }

    public mutating func null() {
        separate()
        literal("null")
        afterValue = true
    }

    public mutating func bool(_ b: Bool) {
        separate()
        literal(b ? "true" : "false")
        afterValue = true
    }

    public mutating func string(_ s: String) {
        separate()
        writeString(s)
        afterValue = true
    }

    /// A string or `null`.
    public mutating func string(_ s: String?) {
        if let s { string(s) } else { null() }
    }

    /// A number: non-finite ones, which JSON cannot hold, as `null`; integral
    /// ones below 2^53 (exact in a Double) as integers, by digits; any other
    /// as Swift's shortest text that reads back as the same Double
    /// (`String(Double)`, e.g. `0.1`, `1e-07`, `1e+16`).
    public mutating func number(_ n: Double) {
        separate()
        if !n.isFinite {
            literal("null")
        } else if let whole = JSONValue.integral(n) {
            writeDigits(whole)
        } else {
            var text = String(n)
            text.withUTF8 { put($0) }
        }
        afterValue = true
    }

    /// Bytes that already are one complete JSON value (e.g. a payload written
    /// before), copied as they are.
    public mutating func raw(_ value: [UInt8]) {
        separate()
        value.withUnsafeBufferPointer { put($0) }
        afterValue = true
    }

    /// `value`, recursively (members in order).
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .number(let n): number(n)
        case .string(let s): string(s)
        case .array(let items):
            beginArray()
            for item in items { self.value(item) }
            endArray()
        case .object(let members):
            beginObject()
            for member in members {
                key(escaping: member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    /// ASCII text fixed at compile time, copied as it is.
    private mutating func literal(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The decimal digits of `n`, written in reverse and turned round: no
    /// intermediate `String`.
    private mutating func writeDigits(_ n: Int64) {
        reserve(20)
        if n < 0 { base[count] = UInt8(ascii: "-"); count += 1 }
        var rest = n.magnitude
        var end = count
        repeat {
            base[end] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            end += 1
            rest /= 10
        } while rest > 0
        var digits = UnsafeMutableBufferPointer(start: base + count, count: end - count)
        digits.reverse()
        count = end
    }

    /// `s` as a JSON string literal. Room for the worst case (every byte
    /// escaped as `\u00XX`) is reserved first; runs of bytes that need no
    /// escape are then copied whole rather than byte by byte.
    private mutating func writeString(_ s: String) {
        var s = s
        let length = s.utf8.count
        reserve(2 + 6 * length)
        let out = base + count  // the closure captures a pointer, not the noncopyable writer
        count += s.withUTF8 { source in Self.writeQuoted(source, to: out) }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Writes `source` quoted and escaped at `out` (which has room for it);
    /// returns the bytes written.
    private static func writeQuoted(_ source: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var n = 0
        func copy(_ run: Slice<UnsafeBufferPointer<UInt8>>) {
            guard let start = run.base.baseAddress, !run.isEmpty else { return }
            (out + n).initialize(from: start + run.startIndex, count: run.count)
            n += run.count
        }
        func emit(_ b: UInt8) {
            out[n] = b
            n += 1
        }
        emit(UInt8(ascii: "\""))
        var start = 0
        for i in source.indices {
            let byte = source[i]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            copy(source[start..<i])
            emit(UInt8(ascii: "\\"))
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): emit(byte)
            case 0x0A: emit(UInt8(ascii: "n"))
            case 0x0D: emit(UInt8(ascii: "r"))
            case 0x09: emit(UInt8(ascii: "t"))
            default:
                emit(UInt8(ascii: "u"))
                emit(UInt8(ascii: "0"))
                emit(UInt8(ascii: "0"))
                emit(hex[Int(byte >> 4)])
                emit(hex[Int(byte & 0xF)])
            }
            start = i + 1
        }
        copy(source[start...])
        emit(UInt8(ascii: "\""))
        return n
    }
}

extension JSONValue {
    /// The tree of bytes a payload of this module wrote (`serialized()`), so
    /// that a payload's `.json` (for `Codable` and tests) is by construction
    /// what the speaker publishes. They always parse; were they ever not to,
    /// the text is kept as a string value, so every test comparing `.json`
    /// shows the fault instead of the firmware trapping.
    init(writtenPayload bytes: [UInt8]) {
        do {
            self = try JSONParser().parse(bytes)
        } catch {
            self = .string(String(decoding: bytes, as: UTF8.self))
        }
    }
}

/// A contract payload, or part of one, that writes its own JSON text.
/// `serialized()` and `json` follow from `write(to:)`, so each payload has
/// exactly one serialiser and its tree is what the speaker publishes.
public protocol JSONWritable {
    /// Writes the value's JSON, keys in contract order.
    func write(to w: inout JSONWriter)
    /// Bytes to reserve up front: one allocation for a typical value.
    static var typicalJSONBytes: Int { get }
}

extension JSONWritable {
    /// The JSON text, as published.
    public func serialized() -> [UInt8] {
        var w = JSONWriter(capacity: Self.typicalJSONBytes)
        write(to: &w)
        return w.bytes
    }

    /// The value as a tree: `serialized()` parsed, so the two cannot differ.
    public var json: JSONValue { JSONValue(writtenPayload: serialized()) }
}
