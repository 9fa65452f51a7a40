/// How the speaker's volume can be controlled, as published in `device.volume`.
///
/// `absolute` means the speaker knows and sets a level; `relative` means the
/// hardware only steps up or down and **no level exists** — not a guess, not
/// a counter (mqtt-contract.md, "device").
public enum VolumeDescriptor: Equatable, Sendable {
    case absolute(level: Double, step: Double)
    case relative

    /// The `volume` object of the `device` payload.
    public var json: JSONValue {
        switch self {
        case let .absolute(level, step):
            return .object([("control", .string("absolute")), ("level", .number(level)), ("step", .number(step))])
        case .relative:
            return .object([("control", .string("relative"))])
        }
    }
}

/// Whether the audio output works (`audio` in the `device` payload).
public enum AudioStatus: String, Equatable, Sendable {
    case ok
    case unavailable
}

/// The speaker as a media device: the retained `device` topic, also embedded
/// in `session.devices`.
public struct DeviceDescriptor: Equatable, Sendable {
    public var id: String
    public var name: String
    public var type: String
    public var volume: VolumeDescriptor
    public var audio: AudioStatus
    /// Output underruns (xruns) recovered since start-up.
    public var underruns: Int
    public var software: String
    /// Why the speaker is not working as it should, in words (an additive
    /// field, absent when all is well): e.g. `session` withheld because
    /// revisions cannot be reserved.
    public var problem: String?

    public init(id: String, name: String, type: String = "speaker", volume: VolumeDescriptor,
                audio: AudioStatus, underruns: Int = 0, software: String, problem: String? = nil) {
        self.problem = problem
        self.id = id
        self.name = name
        self.type = type
        self.volume = volume
        self.audio = audio
        self.underruns = underruns
        self.software = software
    }

    /// The payload as JSON, keys in contract order.
    public var json: JSONValue {
        .object([
            ("id", .string(id)), ("name", .string(name)), ("type", .string(type)),
            ("volume", volume.json), ("audio", .string(audio.rawValue)),
            ("underruns", .number(Double(underruns))), ("software", .string(software)),
        ] + (problem.map { [("problem", JSONValue.string($0))] } ?? []))
    }
}

/// One entry of the retained `catalog` topic.
public struct CatalogEntry: Equatable, Sendable {
    public var id: String
    public var name: String
    public var summary: String

    public init(id: String, name: String, summary: String) {
        self.id = id
        self.name = name
        self.summary = summary
    }

    public var json: JSONValue {
        .object([("id", .string(id)), ("name", .string(name)), ("summary", .string(summary))])
    }
}
