// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What the speaker owes its callers across a restart, a crash or a power
/// cut, kept in `{stateDirectory}/commands.json` (mqtt-contract.md,
/// "Delivery"): the commands it holds — received and acknowledged to the
/// broker, not yet answered —, the results it sent that the broker has not
/// acknowledged yet (`owed`: sent again by the next process), and the
/// results of the last commands it answered (the dedupe ledger), so the
/// next process answers each held command once and applies nothing twice.
///
/// Stored as one JSON object, written atomically like the state file:
/// `{"version":1,"device":"kitchen","held":[…],"owed":[…],"answered":[<result>…]}`
/// (`owed` may be absent: none).
/// Pure value; any thread.
public struct CommandJournal: Equatable, Sendable {
    /// The format version this build writes and reads.
    public static let version = 1
    /// The most commands held at once; a command beyond it is answered
    /// `expired` at once, so the file stays bounded (with payloads of at
    /// most 4096 bytes, about 5 MiB at the very most).
    public static let maxHeld = 1024
    /// A held command the next process receives older than this (by the
    /// wall clock, from when it arrived) is answered `expired`, not applied:
    /// a caller that waited longer has given up on it.
    public static let maxAgeSeconds = 30
    /// How far the wall clock may appear to run backwards between two
    /// processes (a small NTP correction) before a held command's age is
    /// unknown (and the command is answered `expired`).
    public static let clockToleranceMs: Int64 = 2000
    /// The largest file the speaker reads back.
    public static let maxFileBytes = 8 << 20

    /// The device whose commands these are (`device.id`).
    public var deviceID: String
    /// Commands received and not yet answered, oldest first.
    public var held: [HeldCommand]
    /// Results sent whose PUBACK from the broker has not come yet, oldest first.
    public var owed: [OwedResult]
    /// The last results sent, oldest first (at most `RecentResults`' capacity).
    public var answered: [CommandResult]

    public init(deviceID: String, held: [HeldCommand] = [], owed: [OwedResult] = [], answered: [CommandResult] = []) {
        self.deviceID = deviceID
        self.held = held
        self.owed = owed
        self.answered = answered
    }

    /// Why a stored journal is not used (the runtime logs it and sets the file aside).
    public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The JSON document written to disk.
    public var json: JSONValue {
        .object([("version", .number(Double(Self.version))), ("device", .string(deviceID)),
                 ("held", .array(held.map(\.json))), ("owed", .array(owed.map(\.json))),
                 ("answered", .array(answered.map(\.journalJSON)))])
    }

    /// The file's bytes: the JSON document and a newline.
    public var fileBytes: [UInt8] { json.serialized() + [UInt8(ascii: "\n")] }

    /// Parses and validates a stored journal for device `deviceID`. Anything
    /// unexpected — not JSON (a truncated write), another version, another
    /// device, a missing, mistyped or unknown member — is an error, never a
    /// guess: nothing in such a file is applied.
    public static func decode(_ bytes: [UInt8], deviceID: String) throws(DecodeError) -> CommandJournal {
        guard bytes.count <= maxFileBytes else { throw DecodeError(reason: "larger than \(maxFileBytes) bytes") }
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: 8).parse(bytes)
        } catch {
            throw DecodeError(reason: "not valid JSON (\(error))")
        }
        let top = try Fields(value, path: "", known: ["version", "device", "held", "owed", "answered"])
        let version = try top.number("version")
        guard version == Double(Self.version) else {
            throw DecodeError(reason: "version \(value["version"]?.jsonText ?? "") is not \(Self.version) (written by another release)")
        }
        let device = try top.string("device")
        guard device == deviceID else {
            throw DecodeError(reason: "written for device \"\(device.prefix(64))\", not \"\(deviceID)\"")
        }
        var held: [HeldCommand] = []
        for (i, v) in try top.array("held").enumerated() { held.append(try HeldCommand(v, path: "held[\(i)]")) }
        guard held.count <= maxHeld else { throw DecodeError(reason: "held: more than \(maxHeld) commands") }
        var owed: [OwedResult] = []
        if value["owed"] != nil {
            for (i, v) in try top.array("owed").enumerated() { owed.append(try OwedResult(v, path: "owed[\(i)]")) }
        }
        guard owed.count <= maxHeld else { throw DecodeError(reason: "owed: more than \(maxHeld) results") }
        var answered: [CommandResult] = []
        for (i, v) in try top.array("answered").enumerated() { answered.append(try CommandResult(journal: v, path: "answered[\(i)]")) }
        return CommandJournal(deviceID: device, held: held, owed: owed, answered: answered)
    }
}

/// A command the speaker holds: as it arrived, when, and whether it was applied.
public struct HeldCommand: Equatable, Sendable {
    /// The caller's id (the command was well formed).
    public var id: String
    /// The payload as received (valid JSON text: it was decoded once).
    public var payload: [UInt8]
    /// The MQTT v5 response topic the result also goes to (already allowed by the policy).
    public var responseTopic: String?
    public var correlationData: [UInt8]?
    /// When it arrived, by the wall clock (milliseconds since the Unix epoch).
    public var receivedAtMs: Int64
    /// Applied and waiting for the engine or the publication that confirms
    /// it (its result then says whether it took effect); false: not applied
    /// (it arrived while the speaker was stopping).
    public var applied: Bool

    public init(id: String, payload: [UInt8], responseTopic: String?, correlationData: [UInt8]?, receivedAtMs: Int64,
                applied: Bool) {
        self.id = id
        self.payload = payload
        self.responseTopic = responseTopic
        self.correlationData = correlationData
        self.receivedAtMs = receivedAtMs
        self.applied = applied
    }

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(id)), ("payload", .string(String(decoding: payload, as: UTF8.self))),
            ("receivedAt", .number(Double(receivedAtMs))), ("applied", .bool(applied))]
        if let responseTopic { members.append(("responseTopic", .string(responseTopic))) }
        if let correlationData { members.append(("correlationData", .string(WPAKey.hex(correlationData)))) }
        return .object(members)
    }

    init(_ value: JSONValue, path: String) throws(CommandJournal.DecodeError) {
        let f = try Fields(value, path: path, known: ["id", "payload", "receivedAt", "applied", "responseTopic", "correlationData"])
        id = try f.string("id")
        payload = Array(try f.string("payload").utf8)
        let received = try f.number("receivedAt")
        guard received.isFinite, received == received.rounded(), abs(received) < 1e15 else {
            throw CommandJournal.DecodeError(reason: "\(path).receivedAt: not a time in milliseconds")
        }
        receivedAtMs = Int64(received)
        applied = try f.bool("applied")
        responseTopic = try f.optionalString("responseTopic")
        correlationData = try f.optionalHex("correlationData")
    }
}

/// A result the speaker sent whose delivery the broker has not confirmed
/// (its PUBACK): the command it answers was acknowledged to the broker, so
/// nothing but this entry brings the result to its caller after a crash.
public struct OwedResult: Equatable, Sendable {
    public var result: CommandResult
    /// The caller's MQTT v5 response topic, which gets the result too.
    public var responseTopic: String?
    public var correlationData: [UInt8]?

    public init(result: CommandResult, responseTopic: String?, correlationData: [UInt8]?) {
        self.result = result
        self.responseTopic = responseTopic
        self.correlationData = correlationData
    }

    /// The command's id (every owed result names one).
    public var id: String { result.id ?? "" }

    var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("result", result.journalJSON)]
        if let responseTopic { members.append(("responseTopic", .string(responseTopic))) }
        if let correlationData { members.append(("correlationData", .string(WPAKey.hex(correlationData)))) }
        return .object(members)
    }

    init(_ value: JSONValue, path: String) throws(CommandJournal.DecodeError) {
        let f = try Fields(value, path: path, known: ["result", "responseTopic", "correlationData"])
        result = try CommandResult(journal: value["result"] ?? .null, path: path + ".result")
        responseTopic = try f.optionalString("responseTopic")
        correlationData = try f.optionalHex("correlationData")
    }
}

extension CommandResult {
    /// A result as the journal keeps it: the published object.
    var journalJSON: JSONValue {
        // Serialized and parsed by the speaker's own writer and parser: the same bytes as published.
        (try? JSONParser().parse(serialized())) ?? .null
    }

    /// A result read back from the journal, validated as the contract's.
    init(journal value: JSONValue, path: String) throws(CommandJournal.DecodeError) {
        guard case .object = value, let ok = value["ok"]?.boolValue else {
            throw CommandJournal.DecodeError(reason: "\(path): not a command result")
        }
        if ok {
            let f = try Fields(value, path: path, known: ["id", "ok", "revision", "level", "fadeSeconds"])
            let revision = try f.number("revision")
            guard revision >= 0, revision == revision.rounded(), revision < 9e15 else {
                throw CommandJournal.DecodeError(reason: "\(path).revision: not a revision")
            }
            let fade = try f.optionalNumber("fadeSeconds")
            if let fade, !(fade >= 0 && fade < 1e9 && fade == fade.rounded()) {
                throw CommandJournal.DecodeError(reason: "\(path).fadeSeconds: not a whole number of seconds")
            }
            self = .accepted(id: try f.string("id"), revision: UInt64(revision), level: try f.optionalNumber("level"),
                             fadeSeconds: fade.map { Int($0) })
        } else {
            let f = try Fields(value, path: path, known: ["id", "ok", "error"])
            let error = try Fields(value["error"] ?? .null, path: path + ".error", known: ["code", "message"])
            guard let code = CommandErrorCode(rawValue: try error.string("code")) else {
                throw CommandJournal.DecodeError(reason: "\(path).error.code: not a known code")
            }
            self = .rejected(CommandRejection(id: try f.optionalString("id"), code: code, message: try error.string("message")))
        }
        guard id != nil else { throw CommandJournal.DecodeError(reason: "\(path).id: missing") }
    }
}

/// Typed member access with the key path in every error.
private struct Fields {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String, known: Set<String>) throws(CommandJournal.DecodeError) {
        guard case .object(let members) = value else {
            throw CommandJournal.DecodeError(reason: "\(path.isEmpty ? "the journal" : path): expected an object")
        }
        if let unknown = members.first(where: { !known.contains($0.key) }) {
            throw CommandJournal.DecodeError(reason: "\(Self.join(path, unknown.key)): unknown member")
        }
        self.value = value
        self.path = path
    }

    private static func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    private func member(_ key: String) throws(CommandJournal.DecodeError) -> JSONValue {
        guard let v = value[key] else { throw CommandJournal.DecodeError(reason: "\(Self.join(path, key)): missing") }
        return v
    }

    private func mistyped(_ key: String, _ want: String, _ got: JSONValue) -> CommandJournal.DecodeError {
        CommandJournal.DecodeError(reason: "\(Self.join(path, key)): expected \(want), got \(got.kindDescription)")
    }

    func string(_ key: String) throws(CommandJournal.DecodeError) -> String {
        let v = try member(key)
        guard let s = v.stringValue else { throw mistyped(key, "a string", v) }
        return s
    }

    func number(_ key: String) throws(CommandJournal.DecodeError) -> Double {
        let v = try member(key)
        guard let n = v.numberValue, n.isFinite else { throw mistyped(key, "a number", v) }
        return n
    }

    func bool(_ key: String) throws(CommandJournal.DecodeError) -> Bool {
        let v = try member(key)
        guard let b = v.boolValue else { throw mistyped(key, "true or false", v) }
        return b
    }

    func array(_ key: String) throws(CommandJournal.DecodeError) -> [JSONValue] {
        let v = try member(key)
        guard case .array(let items) = v else { throw mistyped(key, "an array", v) }
        return items
    }

    func optionalString(_ key: String) throws(CommandJournal.DecodeError) -> String? {
        guard let v = value[key], v != .null else { return nil }
        guard let s = v.stringValue else { throw mistyped(key, "a string", v) }
        return s
    }

    /// Bytes kept as hexadecimal text (correlation data).
    func optionalHex(_ key: String) throws(CommandJournal.DecodeError) -> [UInt8]? {
        guard let hex = try optionalString(key) else { return nil }
        guard let bytes = SettingsFields.hexBytes(Array(hex.utf8)) else {
            throw CommandJournal.DecodeError(reason: "\(Self.join(path, key)): not hexadecimal")
        }
        return bytes
    }

    func optionalNumber(_ key: String) throws(CommandJournal.DecodeError) -> Double? {
        guard let v = value[key] else { return nil }
        guard let n = v.numberValue, n.isFinite else { throw mistyped(key, "a number", v) }
        return n
    }
}
