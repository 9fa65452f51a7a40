// SPDX-License-Identifier: Apache-2.0
/// Decodes the contract's `Decodable` payloads from a parsed `JSONValue`,
/// with no Foundation: `try SessionAttributes(json: value)`. It runs the same
/// `init(from:)` a Foundation `JSONDecoder` runs, so one decoder per payload
/// serves both; a failure is a `DecodingError` whose coding path says where
/// (`devices[0].volume.control`). Numbers decode to an integer type only
/// when they are whole and in range. Pure value; any thread.
public struct JSONValueDecoder: Decoder {
    let value: JSONValue
    public let codingPath: [any CodingKey]
    public var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// A decoder reading `value`, found at `codingPath` of the document.
    public init(_ value: JSONValue, codingPath: [any CodingKey] = []) {
        self.value = value
        self.codingPath = codingPath
    }

    public func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: JSONValue].self, value, codingPath) }
        return KeyedDecodingContainer(KeyedJSONContainer<Key>(members: members, codingPath: codingPath))
    }

    public func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let items) = value else { throw mismatch([JSONValue].self, value, codingPath) }
        return UnkeyedJSONContainer(items: items, codingPath: codingPath)
    }

    public func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleJSONContainer(value: value, codingPath: codingPath)
    }
}

extension Decodable {
    /// Decodes `json` with `JSONValueDecoder` (no Foundation).
    public init(json: JSONValue) throws {
        try self.init(from: JSONValueDecoder(json))
    }
}

/// An index in an array, as a coding key.
struct JSONIndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private func mismatch(_ type: Any.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
    .typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type), found \(value.kindDescription)"))
}

/// Decodes a scalar from one JSON value (any other type through its own
/// `init(from:)`); shared by the three containers.
private func scalar<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
    let found: Any?
    switch type {
    case is Bool.Type: found = value.boolValue
    case is String.Type: found = value.stringValue
    case is Double.Type: found = value.numberValue
    case is Float.Type: found = value.numberValue.map { Float($0) }
    case is Int.Type: found = try value.numberValue.map { try whole($0, Int.self, path) }
    case is Int64.Type: found = try value.numberValue.map { try whole($0, Int64.self, path) }
    case is UInt64.Type: found = try value.numberValue.map { try whole($0, UInt64.self, path) }
    case is Int32.Type: found = try value.numberValue.map { try whole($0, Int32.self, path) }
    case is UInt32.Type: found = try value.numberValue.map { try whole($0, UInt32.self, path) }
    case is UInt.Type: found = try value.numberValue.map { try whole($0, UInt.self, path) }
    default: return try T(from: JSONValueDecoder(value, codingPath: path))
    }
    guard let result = found as? T else { throw mismatch(type, value, path) }
    return result
}

private func whole<I: FixedWidthInteger>(_ n: Double, _ type: I.Type, _ path: [any CodingKey]) throws -> I {
    guard n.isFinite, n.rounded() == n, let exact = I(exactly: n) else {
        throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(n) is not a whole \(type)"))
    }
    return exact
}

private struct KeyedJSONContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [(key: String, value: JSONValue)]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { members.contains { $0.key == key.stringValue } }

    private func member(_ key: Key) throws -> JSONValue {
        guard let found = members.first(where: { $0.key == key.stringValue }) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing \"\(key.stringValue)\""))
        }
        return found.value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try scalar(type, try member(key), codingPath + [key])
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let found = members.first(where: { $0.key == key.stringValue }), found.value != .null else { return nil }
        return try scalar(type, found.value, codingPath + [key])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        try JSONValueDecoder(try member(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try JSONValueDecoder(try member(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { JSONValueDecoder(.object(members), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(try member(key), codingPath: codingPath + [key])
    }
}

private struct UnkeyedJSONContainer: UnkeyedDecodingContainer {
    let items: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(items: [JSONValue], codingPath: [any CodingKey]) {
        self.items = items
        self.codingPath = codingPath
    }

    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private mutating func next() throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "array ended"))
        }
        defer { currentIndex += 1 }
        return (items[currentIndex], codingPath + [JSONIndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, items[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try scalar(type, value, path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try JSONValueDecoder(value, codingPath: path).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try JSONValueDecoder(value, codingPath: path).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return JSONValueDecoder(value, codingPath: path)
    }
}

private struct SingleJSONContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try scalar(type, value, codingPath) }
}
