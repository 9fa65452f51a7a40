/// Compact JSON text written straight into bytes: the one place that decides
/// how the speaker writes a string, a number or a separator.
///
/// The contract's payloads write themselves through it (`write(to:)`), with
/// no `JSONValue` tree in between: building a tree per payload, walking it and
/// freeing it was most of the core's work per command (issue 13, the command
/// path). `JSONValue.serialized()` writes through it too, so a payload's bytes
/// and the same tree's bytes cannot differ in formatting. Commas are placed
/// by the writer: call `key` before each member's value, `beginObject`/
/// `endObject` and `beginArray`/`endArray` around containers. Pure value type.
public struct JSONWriter {
    /// The text written so far.
    public private(set) var bytes: [UInt8]
    /// A value has just been completed at the current level (the next one needs a comma).
    private var afterValue = false

    /// An empty writer; `capacity` bytes reserved (one allocation for a payload that fits).
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    private mutating func separate() {
        if afterValue { bytes.append(UInt8(ascii: ",")) }
    }

    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        afterValue = false
    }

    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        afterValue = true
    }

    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        afterValue = false
    }

    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        afterValue = true
    }

    /// A member's key, followed by `:`. `name` is written as it is: the
    /// contract's member names are plain ASCII that needs no escape.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        literal(name)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterValue = false
    }

    /// A member's key given at run time (escaped like any string).
    public mutating func key(escaping name: String) {
        separate()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
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
            bytes.append(contentsOf: String(n).utf8)
        }
        afterValue = true
    }

    /// Bytes that already are one complete JSON value (e.g. a payload written
    /// before), copied as they are.
    public mutating func raw(_ value: [UInt8]) {
        separate()
        bytes.append(contentsOf: value)
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
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The decimal digits of `n`, written in reverse and turned round: no
    /// intermediate `String`.
    private mutating func writeDigits(_ n: Int64) {
        if n < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = n.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `s` as a JSON string literal. Runs of bytes that need no escape are
    /// appended whole (one copy each) rather than byte by byte.
    private mutating func writeString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { source in
            var start = 0
            for i in source.indices {
                let byte = source[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if start < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[start..<i])) }
                writeEscape(byte)
                start = i + 1
            }
            if start < source.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: source[start...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The escape sequence of one byte that JSON does not allow raw in a string.
    private mutating func writeEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
        case 0x0A: bytes.append(contentsOf: [92, UInt8(ascii: "n")])
        case 0x0D: bytes.append(contentsOf: [92, UInt8(ascii: "r")])
        case 0x09: bytes.append(contentsOf: [92, UInt8(ascii: "t")])
        default:
            bytes.append(contentsOf: [92, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(Self.hex[Int(byte >> 4)])
            bytes.append(Self.hex[Int(byte & 0xF)])
        }
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
