// SPDX-License-Identifier: Apache-2.0
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
    /// Compact JSON text (UTF-8), written by `JSONWriter`: non-finite numbers,
    /// which JSON cannot hold, as `null`; integral numbers below 2^53 without
    /// a fraction.
    public func serialized() -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.value(self)
        return writer.bytes
    }

    /// Compact JSON text as a `String`.
    public var jsonText: String { String(decoding: serialized(), as: UTF8.self) }

    /// `n` as an integer when it is one and below 2^53 (exact in a Double), else nil.
    static func integral(_ n: Double) -> Int64? {
        n.isFinite && n == n.rounded() && abs(n) < 9_007_199_254_740_992 ? Int64(n) : nil
    }
}
