// SPDX-License-Identifier: Apache-2.0
/// Why a JSON text could not be parsed, and the byte offset where it went wrong.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var offset: Int
    public var reason: String
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes, safe on hostile input: it never
/// traps, limits nesting depth, rejects duplicate keys and invalid UTF-8.
///
/// `allowNonFiniteLiterals` accepts the non-standard tokens `NaN`, `Infinity`
/// and `-Infinity` as numbers, so a command decoder can answer
/// `invalid-value` instead of `malformed` for them. Pure; any thread.
public struct JSONParser {
    public var maxDepth: Int
    public var allowNonFiniteLiterals: Bool

    public init(maxDepth: Int = 32, allowNonFiniteLiterals: Bool = false) {
        self.maxDepth = maxDepth
        self.allowNonFiniteLiterals = allowNonFiniteLiterals
    }

    /// Parses one JSON value that must span the whole input (whitespace aside).
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        var cursor = Cursor(bytes: bytes, options: self)
        cursor.skipWhitespace()
        let value = try cursor.value(depth: 0)
        cursor.skipWhitespace()
        guard cursor.index == bytes.count else { throw cursor.fail("unexpected text after the JSON value") }
        return value
    }

    /// Parses a JSON text given as a `String`.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

private struct Cursor {
    let bytes: [UInt8]
    let options: JSONParser
    var index = 0

    init(bytes: [UInt8], options: JSONParser) {
        self.bytes = bytes
        self.options = options
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while let b = peek, b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { index += 1 }
    }

    mutating func expect(_ literal: String) -> Bool {
        let lit = Array(literal.utf8)
        guard index + lit.count <= bytes.count, Array(bytes[index..<index + lit.count]) == lit else { return false }
        index += lit.count
        return true
    }

    mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= options.maxDepth else { throw fail("nesting deeper than \(options.maxDepth)") }
        guard let b = peek else { throw fail("unexpected end of input") }
        switch b {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): if expect("true") { return .bool(true) }
        case UInt8(ascii: "f"): if expect("false") { return .bool(false) }
        case UInt8(ascii: "n"): if expect("null") { return .null }
        case UInt8(ascii: "N") where options.allowNonFiniteLiterals: if expect("NaN") { return .number(.nan) }
        case UInt8(ascii: "I") where options.allowNonFiniteLiterals: if expect("Infinity") { return .number(.infinity) }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            if options.allowNonFiniteLiterals && expect("-Infinity") { return .number(-.infinity) }
            return .number(try number())
        default: break
        }
        throw fail("unexpected character")
    }

    mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        skipWhitespace()
        if peek == UInt8(ascii: "}") { index += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard peek == UInt8(ascii: "\"") else { throw fail("expected a member name in quotes") }
            let keyStart = index
            let key = try string()
            if members.contains(where: { $0.key == key }) {
                throw JSONParseError(offset: keyStart, reason: "duplicate key \"\(key)\"")
            }
            skipWhitespace()
            guard peek == UInt8(ascii: ":") else { throw fail("expected ':'") }
            index += 1
            skipWhitespace()
            members.append((key, try value(depth: depth + 1)))
            skipWhitespace()
            guard let b = peek else { throw fail("unexpected end of input in an object") }
            index += 1
            if b == UInt8(ascii: "}") { return .object(members) }
            guard b == UInt8(ascii: ",") else { index -= 1; throw fail("expected ',' or '}'") }
        }
    }

    mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if peek == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try value(depth: depth + 1))
            skipWhitespace()
            guard let b = peek else { throw fail("unexpected end of input in an array") }
            index += 1
            if b == UInt8(ascii: "]") { return .array(items) }
            guard b == UInt8(ascii: ",") else { index -= 1; throw fail("expected ',' or ']'") }
        }
    }

    mutating func number() throws(JSONParseError) -> Double {
        let start = index
        if peek == UInt8(ascii: "-") { index += 1 }
        func isDigit(_ b: UInt8?) -> Bool { b.map { $0 >= 48 && $0 <= 57 } ?? false }
        guard isDigit(peek) else { throw fail("expected a digit") }
        if peek == UInt8(ascii: "0") { index += 1 } else { while isDigit(peek) { index += 1 } }
        if peek == UInt8(ascii: ".") {
            index += 1
            guard isDigit(peek) else { throw fail("expected a digit after '.'") }
            while isDigit(peek) { index += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            index += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
            guard isDigit(peek) else { throw fail("expected a digit in the exponent") }
            while isDigit(peek) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let n = Double(text) else { throw JSONParseError(offset: start, reason: "unreadable number") }
        return n
    }

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let d: UInt32
            switch b {
            case 48...57: d = UInt32(b - 48)
            case 65...70: d = UInt32(b - 55)
            case 97...102: d = UInt32(b - 87)
            default: throw fail("bad hex digit in \\u escape")
            }
            v = v << 4 | d
            index += 1
        }
        return v
    }

    mutating func string() throws(JSONParseError) -> String {
        index += 1
        // Most strings (every key, ids, actions) have no escape: find the
        // closing quote and validate the run in one piece. Anything else
        // (an escape, a control character, the end) takes the byte-by-byte
        // path below from the start, so its errors and offsets are unchanged.
        // ASCII needs no validation (it is most of a command), so an all-ASCII
        // run becomes a `String` without a UTF-8 check.
        var end = index
        var ascii = true
        while end < bytes.count {
            let b = bytes[end]
            if b == UInt8(ascii: "\"") {
                if ascii {
                    let s = bytes.withUnsafeBufferPointer { String(decoding: UnsafeBufferPointer(rebasing: $0[index..<end]), as: UTF8.self) }
                    index = end + 1
                    return s
                }
                guard let s = String(validating: bytes[index..<end], as: UTF8.self) else {
                    index = end + 1
                    throw fail("invalid UTF-8 in a string")
                }
                index = end + 1
                return s
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            ascii = ascii && b < 0x80
            end += 1
        }
        var out: [UInt8] = []
        while true {
            guard let b = peek else { throw fail("unterminated string") }
            index += 1
            switch b {
            case UInt8(ascii: "\""):
                guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                return s
            case UInt8(ascii: "\\"):
                guard let e = peek else { throw fail("unterminated escape") }
                index += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(8)
                case UInt8(ascii: "f"): out.append(12)
                case UInt8(ascii: "n"): out.append(10)
                case UInt8(ascii: "r"): out.append(13)
                case UInt8(ascii: "t"): out.append(9)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard expect("\\u") else { throw fail("unpaired surrogate") }
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw fail("unpaired surrogate")
                    }
                    guard let u = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                    out.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw fail("unknown escape")
                }
            case 0..<0x20: throw fail("control character in a string")
            default: out.append(b)
            }
        }
    }
}
