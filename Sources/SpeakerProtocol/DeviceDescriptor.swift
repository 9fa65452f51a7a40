// SPDX-License-Identifier: Apache-2.0
/// How the speaker's volume can be controlled, as published in `device.volume`.
///
/// `absolute` means the speaker knows and sets a level; `relative` means the
/// hardware only steps up or down and **no level exists** — not a guess, not
/// a counter (mqtt-contract.md, "device").
public enum VolumeDescriptor: Equatable, Sendable, JSONWritable {
    case absolute(level: Double, step: Double)
    case relative

    /// Writes the `volume` object of the `device` payload.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        switch self {
        case let .absolute(level, step):
            w.key("control"); w.string("absolute")
            w.key("level"); w.number(level)
            w.key("step"); w.number(step)
        case .relative:
            w.key("control"); w.string("relative")
        }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 64 }
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

    /// Writes the payload, keys in contract order (`problem` only when there is one).
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("name"); w.string(name)
        w.key("type"); w.string(type)
        w.key("volume"); volume.write(to: &w)
        w.key("audio"); w.string(audio.rawValue)
        w.key("underruns"); w.number(Double(underruns))
        w.key("software"); w.string(software)
        if let problem { w.key("problem"); w.string(problem) }
        w.endObject()
    }

    public static var typicalJSONBytes: Int { 256 }
}

/// One entry of the retained `catalog` topic.
public struct CatalogEntry: Equatable, Sendable, JSONWritable {
    public var id: String
    public var name: String
    public var summary: String

    public init(id: String, name: String, summary: String) {
        self.id = id
        self.name = name
        self.summary = summary
    }

    /// Writes the entry, keys in contract order.
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("name"); w.string(name)
        w.key("summary"); w.string(summary)
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
