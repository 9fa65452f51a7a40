// SPDX-License-Identifier: Apache-2.0
/// How the speaker's volume can be controlled, as published in `device.volume`.
///
/// `absolute` means the speaker knows and sets a level; `relative` means the
/// hardware only steps up or down and **no level exists** — not a guess, not
/// a counter (mqtt-contract.md, "device").
public enum VolumeDescriptor: Equatable, Sendable, JSONWritable {
    /// `maxLevel`: the cap in force now (`volume.maxLevel`, lowered by an
    /// active night cap); `capSource`: which of the two sets it, so a
    /// phone's slider can say why its top is lower.
    case absolute(level: Double, step: Double, maxLevel: Double = 1, capSource: VolumeCapSource = .config)
    case relative

    /// Writes the `volume` object of the `device` payload.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case let .absolute(level, step, maxLevel, capSource):
            w.key("control"); w.string("absolute")
            w.key("level"); w.number(level)
            w.key("step"); w.number(step)
            w.key("maxLevel"); w.number(maxLevel)
            w.key("capSource"); w.string(capSource.rawValue)
        case .relative:
            w.key("control"); w.string("relative")
        }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 64 }
}

/// What sets `device.volume.maxLevel`: the configured `volume.maxLevel`, or
/// the night cap while its window holds and it is the lower of the two.
public enum VolumeCapSource: String, Equatable, Sendable, Codable {
    case config, night
}

/// Whether the audio output works (`audio` in the `device` payload).
public enum AudioStatus: String, Equatable, Sendable {
    case ok
    case unavailable
}

/// The speaker as a media device: the retained `device` topic, also embedded
/// in `session.devices`.
public struct DeviceDescriptor: Equatable, Sendable, JSONWritable {
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
    /// The stream is silenced by `mute` (the level is kept).
    public var muted: Bool
    /// The night cap (always written: `null` when there is none).
    public var nightCap: NightCapDescriptor?
    /// The opaque id of the run of the speaker's revision counter: it changes
    /// exactly when the counter starts over (a new or lost state directory),
    /// so a reader resets its revision watermark when it changes. Nil only
    /// in a payload from a speaker that predates it (then not written).
    public var epoch: String?

    public init(id: String, name: String, type: String = "speaker", volume: VolumeDescriptor,
                audio: AudioStatus, underruns: Int = 0, software: String, problem: String? = nil, muted: Bool = false,
                nightCap: NightCapDescriptor? = nil, epoch: String? = nil) {
        self.epoch = epoch
        self.problem = problem
        self.muted = muted
        self.nightCap = nightCap
        self.id = id
        self.name = name
        self.type = type
        self.volume = volume
        self.audio = audio
        self.underruns = underruns
        self.software = software
    }

    /// Writes the payload, keys in contract order (`problem` only when there is one, `epoch` when known).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("name"); w.string(name)
        w.key("type"); w.string(type)
        w.key("volume"); volume.write(to: &w)
        w.key("muted"); w.bool(muted)
        w.key("audio"); w.string(audio.rawValue)
        w.key("underruns"); w.number(Double(underruns))
        w.key("software"); w.string(software)
        if let epoch { w.key("epoch"); w.string(epoch) }
        w.key("nightCap")
        if let nightCap { nightCap.write(to: &w) } else { w.null() }
        if let problem { w.key("problem"); w.string(problem) }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 352 }
}

/// `device.nightCap`: the window (local `HH:MM`), its cap, and whether it holds now.
public struct NightCapDescriptor: Equatable, Sendable, JSONWritable {
    public var from: String
    public var to: String
    public var maxLevel: Double
    public var active: Bool

    public init(from: String, to: String, maxLevel: Double, active: Bool) {
        self.from = from
        self.to = to
        self.maxLevel = maxLevel
        self.active = active
    }

    /// Writes the object, keys in contract order.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("from"); w.string(from)
        w.key("to"); w.string(to)
        w.key("maxLevel"); w.number(maxLevel)
        w.key("active"); w.bool(active)
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 72 }
}

/// One entry of the retained `catalog` topic: a sound, or a mix with its layers.
public struct CatalogEntry: Equatable, Sendable, JSONWritable {
    /// What an entry plays.
    public enum Kind: String, Equatable, Sendable {
        case sound, mix
    }

    public var id: String
    public var name: String
    public var summary: String
    public var kind: Kind
    /// A mix's layers at their saved levels; nil for a sound.
    public var layers: [MixLayer]?
    /// True when an image is published retained on `{root}/artwork/{id}`
    /// (written only when true).
    public var artwork = false
    /// Why the entry's image was refused (not PNG or JPEG, over 64 KiB,
    /// truncated, unreadable); nil when there was none or it was taken.
    public var artworkProblem: String?

    public init(id: String, name: String, summary: String) {
        self.id = id
        self.name = name
        self.summary = summary
        kind = .sound
        layers = nil
    }

    /// The entry of a mix.
    public init(mix: MixDefinition) {
        id = mix.id
        name = mix.name
        summary = mix.catalogSummary
        kind = .mix
        layers = mix.layers
    }

    /// Writes the entry, keys in contract order (`layers` for a mix only,
    /// `artwork` and `artworkProblem` only when set).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("name"); w.string(name)
        w.key("summary"); w.string(summary)
        w.key("kind"); w.string(kind.rawValue)
        if let layers { w.key("layers"); MixLayer.write(layers, to: &w) }
        if artwork { w.key("artwork"); w.bool(true) }
        if let artworkProblem { w.key("artworkProblem"); w.string(artworkProblem) }
        w.endObject()
    }

    /// The whole `catalog` payload: an array of `entries`.
    public static func serialized(_ entries: [CatalogEntry]) -> [UInt8] {
        var w = JSONWriter(capacity: 64 + 96 * entries.count)
        w.beginArray()
        for entry in entries { entry.write(to: &w) }
        w.endArray()
        return w.bytes
    }

    public static var typicalJSONBytes: Int { 128 }
}
