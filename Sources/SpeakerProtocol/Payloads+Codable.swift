// SPDX-License-Identifier: Apache-2.0
// `Codable` conformances for the contract's payloads, for clients that use
// Foundation's JSONEncoder/JSONDecoder (an iOS app extension, a server).
// Each payload has one serialiser, its `write(to:)` through `JSONWriter`
// (what the speaker publishes, held by the contract tests); its `.json` is
// those bytes parsed, and `encode(to:)` writes that same `JSONValue` through
// any `Encoder`, so the three cannot drift. The decoders accept exactly
// what `.json` produces; tests hold them together. The speaker itself never
// uses these: its own paths stay free of Foundation. Nothing here imports
// Foundation.

/// Coding keys shared by the payload conformances.
struct PayloadKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension JSONValue: Encodable {
    /// Writes the value through `encoder` as ``serialized()`` writes it:
    /// members in order, non-finite numbers as `null`, integral numbers
    /// below 2^53 as integers.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .array(let items):
            var c = encoder.unkeyedContainer()
            for item in items { try c.encode(item) }
        case .object(let members):
            var c = encoder.container(keyedBy: PayloadKey.self)
            for member in members { try c.encode(member.value, forKey: PayloadKey(member.key)) }
        case .null:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .string(let text):
            var c = encoder.singleValueContainer()
            try c.encode(text)
        case .number(let n):
            var c = encoder.singleValueContainer()
            if !n.isFinite { try c.encodeNil() } else if let whole = Self.integral(n) { try c.encode(whole) } else { try c.encode(n) }
        }
    }
}

extension VolumeDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: PayloadKey.self)
        switch try c.decode(String.self, forKey: PayloadKey("control")) {
        case "absolute":
            self = .absolute(level: try c.decode(Double.self, forKey: PayloadKey("level")),
                             step: try c.decode(Double.self, forKey: PayloadKey("step")),
                             maxLevel: try c.decodeIfPresent(Double.self, forKey: PayloadKey("maxLevel")) ?? 1,
                             capSource: try c.decodeIfPresent(VolumeCapSource.self, forKey: PayloadKey("capSource")) ?? .config)
        case "relative":
            self = .relative
        case let other:
            throw DecodingError.dataCorruptedError(forKey: PayloadKey("control"), in: c,
                                                   debugDescription: "unknown volume control \"\(other)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension JSONValue: Decodable {
    /// Reads any JSON value (object members in the decoder's key order).
    public init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !list.isAtEnd { items.append(try list.decode(JSONValue.self)) }
            self = .array(items)
        } else if let object = try? decoder.container(keyedBy: PayloadKey.self) {
            self = .object(try object.allKeys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
        } else {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? c.decode(Double.self) {
                self = .number(n)
            } else {
                self = .string(try c.decode(String.self))
            }
        }
    }
}

extension AudioStatus: Codable {}
extension CommandErrorCode: Codable {}
extension CommandAction: Codable {}
extension CatalogEntry.Kind: Codable {}

extension MixLayer: Codable {
    enum CodingKeys: String, CodingKey { case soundID, level }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(soundID: try c.decode(String.self, forKey: .soundID), level: try c.decode(Double.self, forKey: .level))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(soundID, forKey: .soundID)
        try c.encode(level, forKey: .level)
    }
}

extension DeviceDescriptor: Codable {
    enum CodingKeys: String, CodingKey { case id, name, type, volume, audio, underruns, software, problem, muted, nightCap, epoch }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  type: try c.decode(String.self, forKey: .type), volume: try c.decode(VolumeDescriptor.self, forKey: .volume),
                  audio: try c.decode(AudioStatus.self, forKey: .audio),
                  underruns: try c.decodeIfPresent(Int.self, forKey: .underruns) ?? 0,
                  software: try c.decode(String.self, forKey: .software),
                  problem: try c.decodeIfPresent(String.self, forKey: .problem),
                  muted: try c.decodeIfPresent(Bool.self, forKey: .muted) ?? false,
                  nightCap: try c.decodeIfPresent(NightCapDescriptor.self, forKey: .nightCap),
                  epoch: try c.decodeIfPresent(String.self, forKey: .epoch))
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension NightCapDescriptor: Codable {
    enum CodingKeys: String, CodingKey { case from, to, maxLevel, active }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(from: try c.decode(String.self, forKey: .from), to: try c.decode(String.self, forKey: .to),
                  maxLevel: try c.decode(Double.self, forKey: .maxLevel), active: try c.decode(Bool.self, forKey: .active))
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension CatalogEntry: Codable {
    enum CodingKeys: String, CodingKey { case id, name, summary, kind, layers, artwork, artworkProblem }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  summary: try c.decode(String.self, forKey: .summary))
        kind = try c.decodeIfPresent(Kind.self, forKey: .kind) ?? .sound
        layers = try c.decodeIfPresent([MixLayer].self, forKey: .layers)
        artwork = try c.decodeIfPresent(Bool.self, forKey: .artwork) ?? false
        artworkProblem = try c.decodeIfPresent(String.self, forKey: .artworkProblem)
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension SessionAttributes: Codable {
    enum CodingKeys: String, CodingKey {
        case id, soundID, soundName, layers, isPlaying, intendsPlayback, updatedAt, clockSynced, revision, ended, commands, devices
        case sleepTimer
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decodeIfPresent(String.self, forKey: .id),
                  soundID: try c.decode(String.self, forKey: .soundID),
                  soundName: try c.decode(String.self, forKey: .soundName),
                  isPlaying: try c.decode(Bool.self, forKey: .isPlaying),
                  intendsPlayback: try c.decode(Bool.self, forKey: .intendsPlayback),
                  updatedAt: try c.decode(String.self, forKey: .updatedAt),
                  clockSynced: try c.decode(Bool.self, forKey: .clockSynced),
                  revision: try c.decode(UInt64.self, forKey: .revision),
                  ended: try c.decode(Bool.self, forKey: .ended),
                  commands: try c.decode([String].self, forKey: .commands),
                  devices: try c.decode([DeviceDescriptor].self, forKey: .devices),
                  sleepTimer: try c.decodeIfPresent(SleepTimerAttributes.self, forKey: .sleepTimer))
        layers = try c.decodeIfPresent([MixLayer].self, forKey: .layers)
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension CommandResult: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: PayloadKey.self)
        let id = try c.decodeIfPresent(String.self, forKey: PayloadKey("id"))
        if try c.decode(Bool.self, forKey: PayloadKey("ok")) {
            guard let id else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("id"), in: c, debugDescription: "an accepted result has an id")
            }
            self = .accepted(id: id, revision: try c.decode(UInt64.self, forKey: PayloadKey("revision")),
                             level: try c.decodeIfPresent(Double.self, forKey: PayloadKey("level")),
                             fadeSeconds: try c.decodeIfPresent(Int.self, forKey: PayloadKey("fadeSeconds")))
        } else {
            let error = try c.nestedContainer(keyedBy: PayloadKey.self, forKey: PayloadKey("error"))
            self = .rejected(CommandRejection(id: id, code: try error.decode(CommandErrorCode.self, forKey: PayloadKey("code")),
                                              message: try error.decode(String.self, forKey: PayloadKey("message"))))
        }
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension InputEventPayload: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: PayloadKey.self)
        switch try c.decode(String.self, forKey: PayloadKey("source")) {
        case "button":
            self = .button(name: try c.decode(String.self, forKey: PayloadKey("name")),
                           gesture: try c.decode(String.self, forKey: PayloadKey("gesture")))
        case "knob":
            self = .knob(delta: try c.decode(Int.self, forKey: PayloadKey("delta")))
        case let other:
            throw DecodingError.dataCorruptedError(forKey: PayloadKey("source"), in: c,
                                                   debugDescription: "unknown event source \"\(other)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension CommandEnvelope: Codable {
    /// Decodes with the same rules as `CommandDecoder` (which the speaker uses):
    /// a valid id, a known action, its fields, finite levels, steps 1–20.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: PayloadKey.self)
        let id = try c.decode(String.self, forKey: PayloadKey("id"))
        guard CommandDecoder.isValidID(id) else {
            throw DecodingError.dataCorruptedError(forKey: PayloadKey("id"), in: c, debugDescription: "1-64 printable ASCII characters")
        }
        let action = try c.decode(CommandAction.self, forKey: PayloadKey("action"))
        switch action {
        case .play: command = .play
        case .pause: command = .pause
        case .toggle: command = .toggle
        case .stop: command = .stop
        case .next: command = .next
        case .previous: command = .previous
        case .select: command = .select(soundID: try c.decode(String.self, forKey: PayloadKey("soundID")))
        case .setVolume:
            let level = try c.decode(Double.self, forKey: PayloadKey("level"))
            guard level.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("level"), in: c, debugDescription: "must be finite")
            }
            command = .setVolume(level: level)
        case .volumeUp, .volumeDown:
            let steps = try c.decodeIfPresent(Int.self, forKey: PayloadKey("steps")) ?? 1
            guard (1...20).contains(steps) else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("steps"), in: c, debugDescription: "1 to 20")
            }
            command = action == .volumeUp ? .volumeUp(steps: steps) : .volumeDown(steps: steps)
        case .setSleepTimer:
            let minutes = try c.decode(Int.self, forKey: PayloadKey("minutes"))
            let fade = try c.decodeIfPresent(Int.self, forKey: PayloadKey("fadeSeconds"))
            guard (1...720).contains(minutes) else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("minutes"), in: c, debugDescription: "1 to 720")
            }
            guard fade.map({ (0...1800).contains($0) }) ?? true else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("fadeSeconds"), in: c, debugDescription: "0 to 1800")
            }
            command = .setSleepTimer(minutes: minutes, fadeSeconds: fade)
        case .cancelSleepTimer: command = .cancelSleepTimer
        case .mute: command = .mute
        case .unmute: command = .unmute
        case .setSchedules: command = .setSchedules(try c.decode(JSONValue.self, forKey: PayloadKey("schedules")))
        case .setScheduleEnabled:
            let index = try c.decode(Int.self, forKey: PayloadKey("index"))
            guard index >= 0 else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("index"), in: c, debugDescription: "0 or more")
            }
            command = .setScheduleEnabled(index: index, enabled: try c.decode(Bool.self, forKey: PayloadKey("enabled")))
        case .setNightCap: command = .setNightCap(try c.decodeIfPresent(JSONValue.self, forKey: PayloadKey("nightCap")) ?? .null)
        case .saveMix:
            let layers = try c.decode([MixLayer].self, forKey: PayloadKey("layers"))
            let mix = MixDefinition(id: try c.decode(String.self, forKey: PayloadKey("mixID")),
                                    name: try c.decode(String.self, forKey: PayloadKey("name")),
                                    summary: try c.decodeIfPresent(String.self, forKey: PayloadKey("summary")), layers: layers)
            if let (path, message) = mix.structuralProblem() {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey(path == "id" ? "mixID" : "layers"), in: c, debugDescription: message)
            }
            command = .saveMix(mix)
        case .deleteMix: command = .deleteMix(mixID: try c.decode(String.self, forKey: PayloadKey("mixID")))
        case .setLayerLevel:
            let level = try c.decode(Double.self, forKey: PayloadKey("level"))
            guard level.isFinite, (0...1).contains(level) else {
                throw DecodingError.dataCorruptedError(forKey: PayloadKey("level"), in: c, debugDescription: "must be in [0, 1]")
            }
            command = .setLayerLevel(soundID: try c.decode(String.self, forKey: PayloadKey("soundID")), level: level)
        }
        self.id = id
    }

    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension CommandEnvelope {
    /// The command as the contract's JSON (what a client publishes on `command`).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("action", .string(command.action.rawValue))]
        switch command {
        case .select(let sound): members.append(("soundID", .string(sound)))
        case .setVolume(let level): members.append(("level", .number(level)))
        case .volumeUp(let steps), .volumeDown(let steps): members.append(("steps", .number(Double(steps))))
        case let .setSleepTimer(minutes, fade):
            members.append(("minutes", .number(Double(minutes))))
            if let fade { members.append(("fadeSeconds", .number(Double(fade)))) }
        case .setSchedules(let rules): members.append(("schedules", rules))
        case let .setScheduleEnabled(index, enabled):
            members += [("index", .number(Double(index))), ("enabled", .bool(enabled))]
        case .setNightCap(let cap): members.append(("nightCap", cap))
        case .saveMix(let mix):
            members.append(("mixID", .string(mix.id)))
            members.append(("name", .string(mix.name)))
            if let summary = mix.summary { members.append(("summary", .string(summary))) }
            members.append(("layers", MixLayer.json(mix.layers)))
        case .deleteMix(let mixID): members.append(("mixID", .string(mixID)))
        case let .setLayerLevel(sound, level):
            members.append(("soundID", .string(sound)))
            members.append(("level", .number(level)))
        default: break
        }
        return .object(members)
    }
}
