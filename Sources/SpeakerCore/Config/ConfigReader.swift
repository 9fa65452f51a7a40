// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// Reads one JSON object of the config file, tracking which members were
/// used so that unknown keys become errors that name them.
struct ConfigReader {
    let path: String
    private let members: [(key: String, value: JSONValue)]
    private var used: Set<String> = []

    init(_ value: JSONValue, path: String) throws(ConfigError) {
        guard case .object(let members) = value else {
            throw ConfigError(path: path.isEmpty ? "(file)" : path,
                              message: "expected an object, got \(value.kindDescription)")
        }
        self.path = path
        self.members = members
    }

    /// `parent.key`; an empty or dotted key is quoted so the path stays readable.
    func keyPath(_ key: String) -> String {
        let shown = key.isEmpty || key.contains(".") ? JSONValue.string(key).jsonText : key
        return path.isEmpty ? shown : "\(path).\(shown)"
    }

    /// The raw member, or nil when absent. Marks it used.
    mutating func raw(_ key: String) -> JSONValue? {
        used.insert(key)
        return members.first(where: { $0.key == key })?.value
    }

    /// Marks every member whose name starts with `_` as used: comments in
    /// files people edit (the image's settings).
    mutating func skipComments() {
        for member in members where member.key.hasPrefix("_") { used.insert(member.key) }
    }

    /// Fails on any member that no reader asked for.
    func finish() throws(ConfigError) {
        for member in members where !used.contains(member.key) {
            let known = used.sorted().joined(separator: ", ")
            throw ConfigError(path: keyPath(member.key), message: "unknown key (known keys here: \(known))")
        }
    }

    func fail(_ key: String, _ message: String) -> ConfigError { ConfigError(path: keyPath(key), message: message) }

    mutating func string(_ key: String, default value: String, nonEmpty: Bool = true) throws(ConfigError) -> String {
        guard let v = raw(key) else { return value }
        guard let s = v.stringValue else { throw fail(key, "expected a string, got \(v.kindDescription)") }
        if nonEmpty && s.isEmpty { throw fail(key, "must not be empty") }
        return s
    }

    /// A string or `null` (nil).
    mutating func optionalString(_ key: String, default value: String?) throws(ConfigError) -> String? {
        guard let v = raw(key) else { return value }
        if v == .null { return nil }
        guard let s = v.stringValue, !s.isEmpty else {
            throw fail(key, "expected a non-empty string or null, got \(v.kindDescription)")
        }
        return s
    }

    mutating func bool(_ key: String, default value: Bool) throws(ConfigError) -> Bool {
        guard let v = raw(key) else { return value }
        guard let b = v.boolValue else { throw fail(key, "expected true or false, got \(v.kindDescription)") }
        return b
    }

    mutating func int(_ key: String, default value: Int, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let v = raw(key) else { return value }
        guard let n = v.numberValue, n.isFinite, n == n.rounded() else {
            throw fail(key, "expected a whole number in \(range.lowerBound)...\(range.upperBound), got \(Self.show(v))")
        }
        guard n >= Double(range.lowerBound), n <= Double(range.upperBound) else {
            throw fail(key, "must be in \(range.lowerBound)...\(range.upperBound), got \(Self.show(v))")
        }
        return Int(n)
    }

    mutating func double(_ key: String, default value: Double, in range: ClosedRange<Double>,
                         excludingLower: Bool = false) throws(ConfigError) -> Double {
        guard let v = raw(key) else { return value }
        let rangeText = "\(excludingLower ? "(" : "[")\(JSONValue.number(range.lowerBound).jsonText), \(JSONValue.number(range.upperBound).jsonText)]"
        guard let n = v.numberValue, n.isFinite else { throw fail(key, "expected a number in \(rangeText), got \(Self.show(v))") }
        guard range.contains(n), !(excludingLower && n == range.lowerBound) else {
            throw fail(key, "must be in \(rangeText), got \(Self.show(v))")
        }
        return n
    }

    mutating func choice<T: RawRepresentable & CaseIterable>(_ key: String, default value: T) throws(ConfigError) -> T
        where T.RawValue == String {
        guard let v = raw(key) else { return value }
        let options = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        guard let s = v.stringValue, let c = T(rawValue: s) else {
            throw fail(key, "expected one of \(options), got \(Self.show(v))")
        }
        return c
    }

    /// A nested object reader, or nil when the member is absent.
    mutating func section(_ key: String) throws(ConfigError) -> ConfigReader? {
        guard let v = raw(key) else { return nil }
        return try ConfigReader(v, path: keyPath(key))
    }

    static func show(_ v: JSONValue) -> String {
        switch v {
        case .string, .number, .bool, .null: return v.jsonText
        default: return v.kindDescription
        }
    }
}
