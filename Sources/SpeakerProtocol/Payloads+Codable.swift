// `Codable` conformances for the contract's payloads, for clients that use
// Foundation's JSONEncoder/JSONDecoder (an iOS app extension, a server).
// They produce and accept exactly what `.json` produces (same keys, `null`
// where `.json` writes null, no extra keys); tests hold the two together.
// The speaker itself never uses them: it serialises through `JSONValue`,
// so its own paths stay free of Foundation. Nothing here imports Foundation.

/// Coding keys shared by the payload conformances.
struct PayloadKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension VolumeDescriptor: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: PayloadKey.self)
        switch try c.decode(String.self, forKey: PayloadKey("control")) {
        case "absolute":
            self = .absolute(level: try c.decode(Double.self, forKey: PayloadKey("level")),
                             step: try c.decode(Double.self, forKey: PayloadKey("step")))
        case "relative":
            self = .relative
        case let other:
            throw DecodingError.dataCorruptedError(forKey: PayloadKey("control"), in: c,
                                                   debugDescription: "unknown volume control \"\(other)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PayloadKey.self)
        switch self {
        case let .absolute(level, step):
            try c.encode("absolute", forKey: PayloadKey("control"))
            try c.encode(level, forKey: PayloadKey("level"))
            try c.encode(step, forKey: PayloadKey("step"))
        case .relative:
            try c.encode("relative", forKey: PayloadKey("control"))
        }
    }
}

extension AudioStatus: Codable {}
extension CommandErrorCode: Codable {}
extension CommandAction: Codable {}

extension DeviceDescriptor: Codable {
    enum CodingKeys: String, CodingKey { case id, name, type, volume, audio, underruns, software, problem }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  type: try c.decode(String.self, forKey: .type), volume: try c.decode(VolumeDescriptor.self, forKey: .volume),
                  audio: try c.decode(AudioStatus.self, forKey: .audio),
                  underruns: try c.decodeIfPresent(Int.self, forKey: .underruns) ?? 0,
                  software: try c.decode(String.self, forKey: .software),
                  problem: try c.decodeIfPresent(String.self, forKey: .problem))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(type, forKey: .type)
        try c.encode(volume, forKey: .volume)
        try c.encode(audio, forKey: .audio)
        try c.encode(underruns, forKey: .underruns)
        try c.encode(software, forKey: .software)
        try c.encodeIfPresent(problem, forKey: .problem)
    }
}

extension CatalogEntry: Codable {
    enum CodingKeys: String, CodingKey { case id, name, summary }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(id: try c.decode(String.self, forKey: .id), name: try c.decode(String.self, forKey: .name),
                  summary: try c.decode(String.self, forKey: .summary))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(summary, forKey: .summary)
    }
}

extension SessionAttributes: Codable {
    enum CodingKeys: String, CodingKey {
        case id, soundID, soundName, isPlaying, intendsPlayback, updatedAt, clockSynced, revision, ended, commands, devices
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
                  devices: try c.decode([DeviceDescriptor].self, forKey: .devices))
    }

    /// Like the synthesised encoder, except that a missing `id` is written as
    /// `null` (the contract's "never had a session"), not left out.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if let id { try c.encode(id, forKey: .id) } else { try c.encodeNil(forKey: .id) }
        try c.encode(soundID, forKey: .soundID)
        try c.encode(soundName, forKey: .soundName)
        try c.encode(isPlaying, forKey: .isPlaying)
        try c.encode(intendsPlayback, forKey: .intendsPlayback)
        try c.encode(updatedAt, forKey: .updatedAt)
        try c.encode(clockSynced, forKey: .clockSynced)
        try c.encode(revision, forKey: .revision)
        try c.encode(ended, forKey: .ended)
        try c.encode(commands, forKey: .commands)
        try c.encode(devices, forKey: .devices)
    }
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
                             level: try c.decodeIfPresent(Double.self, forKey: PayloadKey("level")))
        } else {
            let error = try c.nestedContainer(keyedBy: PayloadKey.self, forKey: PayloadKey("error"))
            self = .rejected(CommandRejection(id: id, code: try error.decode(CommandErrorCode.self, forKey: PayloadKey("code")),
                                              message: try error.decode(String.self, forKey: PayloadKey("message"))))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PayloadKey.self)
        switch self {
        case let .accepted(id, revision, level):
            try c.encode(id, forKey: PayloadKey("id"))
            try c.encode(true, forKey: PayloadKey("ok"))
            try c.encode(revision, forKey: PayloadKey("revision"))
            if let level { try c.encode(level, forKey: PayloadKey("level")) }
        case .rejected(let r):
            if let id = r.id { try c.encode(id, forKey: PayloadKey("id")) } else { try c.encodeNil(forKey: PayloadKey("id")) }
            try c.encode(false, forKey: PayloadKey("ok"))
            var error = c.nestedContainer(keyedBy: PayloadKey.self, forKey: PayloadKey("error"))
            try error.encode(r.code, forKey: PayloadKey("code"))
            try error.encode(r.message, forKey: PayloadKey("message"))
        }
    }
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

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PayloadKey.self)
        switch self {
        case let .button(name, gesture):
            try c.encode("button", forKey: PayloadKey("source"))
            try c.encode(name, forKey: PayloadKey("name"))
            try c.encode(gesture, forKey: PayloadKey("gesture"))
        case .knob(let delta):
            try c.encode("knob", forKey: PayloadKey("source"))
            try c.encode(delta, forKey: PayloadKey("delta"))
        }
    }
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
        }
        self.id = id
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: PayloadKey.self)
        try c.encode(id, forKey: PayloadKey("id"))
        try c.encode(command.action, forKey: PayloadKey("action"))
        switch command {
        case .select(let sound): try c.encode(sound, forKey: PayloadKey("soundID"))
        case .setVolume(let level): try c.encode(level, forKey: PayloadKey("level"))
        case .volumeUp(let steps), .volumeDown(let steps): try c.encode(steps, forKey: PayloadKey("steps"))
        default: break
        }
    }
}

extension CommandEnvelope {
    /// The command as the contract's JSON (what a client publishes on `command`).
    public var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [("id", .string(id)), ("action", .string(command.action.rawValue))]
        switch command {
        case .select(let sound): members.append(("soundID", .string(sound)))
        case .setVolume(let level): members.append(("level", .number(level)))
        case .volumeUp(let steps), .volumeDown(let steps): members.append(("steps", .number(Double(steps))))
        default: break
        }
        return .object(members)
    }
}
