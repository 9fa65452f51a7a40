// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// What survives a restart and a power cut (hardware.md, "Persistence"): the
/// last sound, the absolute level (never a level on step-only hardware) and
/// whether the listener wanted playback.
///
/// Stored as one small JSON object, `{"version":1,"soundID":"rain",
/// "level":0.45,"intendsPlayback":true}`; `level` is absent in `gpio-step`
/// mode. Pure value; any thread.
public struct PersistedState: Equatable, Sendable {
    /// The format version this build writes and reads.
    public static let version = 1

    /// The selected sound's catalog id.
    public var soundID: String
    /// The absolute level in [0, 1]; nil on relative (step-only) hardware.
    public var level: Double?
    /// Whether the listener wanted the speaker playing.
    public var intendsPlayback: Bool
    /// The sleep timer running when the state was saved (absent: none).
    public var sleepTimer: PersistedSleepTimer?
    /// What the schedule keeps: rules and night cap set over MQTT, and how
    /// far the rules have fired (absent on a device that never had them).
    public var schedule = PersistedSchedule()

    public init(soundID: String, level: Double?, intendsPlayback: Bool, sleepTimer: PersistedSleepTimer? = nil,
                schedule: PersistedSchedule = PersistedSchedule()) {
        self.sleepTimer = sleepTimer
        self.soundID = soundID
        self.level = level
        self.intendsPlayback = intendsPlayback
        self.schedule = schedule
    }

    /// Why a stored file could not be used (the runtime logs it and starts from defaults).
    public struct DecodeError: Error, Equatable, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// The JSON document written to disk.
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("version", .number(Double(Self.version))),
            ("soundID", .string(soundID)),
        ]
        if let level { members.append(("level", .number(level))) }
        members.append(("intendsPlayback", .bool(intendsPlayback)))
        if let sleepTimer { members.append(("sleepTimer", sleepTimer.json)) }
        members += schedule.members
        return .object(members)
    }

    /// The file's bytes: the JSON document and a newline.
    public var fileBytes: [UInt8] { json.serialized() + [UInt8(ascii: "\n")] }

    /// Parses and validates a stored file. Anything unexpected — not JSON, a
    /// different version, a missing or mistyped member, a level outside
    /// [0, 1], unknown members — is an error, never a guess.
    public static func decode(_ bytes: [UInt8]) throws(DecodeError) -> PersistedState {
        let value: JSONValue
        do {
            value = try JSONParser(maxDepth: 8).parse(bytes)
        } catch {
            throw DecodeError(reason: "not valid JSON (\(error))")
        }
        guard case .object(let members) = value else { throw DecodeError(reason: "expected a JSON object") }
        let known = Set(["version", "soundID", "level", "intendsPlayback", "sleepTimer"]).union(PersistedSchedule.keys)
        if let unknown = members.first(where: { !known.contains($0.key) }) {
            throw DecodeError(reason: "unknown member \"\(unknown.key)\"")
        }
        guard value["version"]?.numberValue == Double(version) else {
            throw DecodeError(reason: "version must be \(version), got \(value["version"]?.jsonText ?? "nothing")")
        }
        guard let soundID = value["soundID"]?.stringValue, !soundID.isEmpty else {
            throw DecodeError(reason: "soundID must be a non-empty string")
        }
        guard let intends = value["intendsPlayback"]?.boolValue else {
            throw DecodeError(reason: "intendsPlayback must be true or false")
        }
        var level: Double?
        if let raw = value["level"] {
            guard let l = raw.numberValue, l.isFinite, (0...1).contains(l) else {
                throw DecodeError(reason: "level must be a number in [0, 1], got \(raw.jsonText)")
            }
            level = l
        }
        var timer: PersistedSleepTimer?
        if let raw = value["sleepTimer"] { timer = try PersistedSleepTimer.decode(raw) }
        return PersistedState(soundID: soundID, level: level, intendsPlayback: intends, sleepTimer: timer,
                              schedule: try PersistedSchedule.decode(value))
    }

    /// A one-line summary for logs: `sound "rain", level 0.45, playing`.
    public var summary: String {
        "sound \"\(soundID)\", " + (level.map { "level \($0)" } ?? "no level (step-only)")
            + (intendsPlayback ? ", playing" : ", not playing")
            + (sleepTimer.map { ", sleep timer \($0.minutes) min ending \($0.endsAt.iso8601)" } ?? "")
    }
}
