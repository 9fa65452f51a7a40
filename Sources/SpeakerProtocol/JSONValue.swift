/// A JSON document as a Swift value, with member order preserved.
///
/// The speaker parses commands and configuration into `JSONValue` first so it
/// can say *exactly* what was wrong and where (`volume.step: must be a number`),
/// which `Codable` cannot, and so the firmware needs no Foundation at all.
/// Pure value type: safe on any thread.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// Members in document order. Duplicate keys are rejected by the parser.
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case let (.bool(x), .bool(y)): return x == y
        case let (.number(x), .number(y)): return x == y || (x.isNaN && y.isNaN)
        case let (.string(x), .string(y)): return x == y
        case let (.array(x), .array(y)): return x == y
        case let (.object(x), .object(y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The member named `key` of an object, or nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    /// A short name of the value's kind, for error messages ("a string", "null").
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The value as a string, if it is one.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The value as a number, if it is one.
    public var numberValue: Double? { if case .number(let n) = self { return n }; return nil }
    /// The value as a boolean, if it is one.
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
}

extension JSONValue {
    /// Compact JSON text (UTF-8). Non-finite numbers, which JSON cannot hold,
    /// are written as `null`; integral numbers below 2^53 print without a fraction.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(1024)  // a session payload is ~600 bytes: one allocation
        write(into: &out)
        return out
    }

    /// Compact JSON text as a `String`.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    private func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: JSONValue.format(n).utf8)
        case .string(let s): JSONValue.writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func format(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if let whole = integral(n) { return String(whole) }
        return String(n)
    }

    /// `n` as an integer when it is one and below 2^53 (exact in a Double), else nil.
    static func integral(_ n: Double) -> Int64? {
        n.isFinite && n == n.rounded() && abs(n) < 9_007_199_254_740_992 ? Int64(n) : nil
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// `s` as a JSON string literal. Runs of bytes that need no escape are
    /// appended whole (one copy each) rather than byte by byte: this is the
    /// hottest part of a `session` publication (issue 13, command path).
    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var start = 0
            for i in bytes.indices {
                let byte = bytes[i]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if start < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i])) }
                writeEscape(byte, into: &out)
                start = i + 1
            }
            if start < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...])) }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The escape sequence of one byte that JSON does not allow raw in a string.
    private static func writeEscape(_ byte: UInt8, into out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: [92, 34])
        case UInt8(ascii: "\\"): out.append(contentsOf: [92, 92])
        case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
        default:
            out.append(contentsOf: [92, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0xF)])
        }
    }
}
