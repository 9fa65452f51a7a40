// SPDX-License-Identifier: Apache-2.0
/// The retained `session` payload: what a server forwards to the phone as the
/// remote media session's attributes (mqtt-contract.md, "session").
public struct SessionAttributes: Equatable, Sendable {
    /// Session id, stable from the first play until the session ends; nil if there never was one.
    public var id: String?
    public var soundID: String
    public var soundName: String
    /// The playing mix's layers at their current levels; nil for a single sound.
    public var layers: [MixLayer]?
    /// Audio is actually leaving the speaker (the engine's truth).
    public var isPlaying: Bool
    /// The listener wants it playing; survives device interruptions.
    public var intendsPlayback: Bool
    /// ISO 8601 UTC with milliseconds.
    public var updatedAt: String
    /// False while the wall clock is not NTP-synchronised.
    public var clockSynced: Bool
    /// Strictly increasing across restarts.
    public var revision: UInt64
    public var ended: Bool
    /// The actions the speaker accepts right now.
    public var commands: [String]
    public var devices: [DeviceDescriptor]
    /// The running sleep timer; nil (published as `null`) when none runs.
    public var sleepTimer: SleepTimerAttributes?

    public init(id: String?, soundID: String, soundName: String, isPlaying: Bool, intendsPlayback: Bool,
                updatedAt: String, clockSynced: Bool, revision: UInt64, ended: Bool, commands: [String],
                devices: [DeviceDescriptor], sleepTimer: SleepTimerAttributes? = nil) {
        self.sleepTimer = sleepTimer
        self.id = id
        self.soundID = soundID
        self.soundName = soundName
        self.isPlaying = isPlaying
        self.intendsPlayback = intendsPlayback
        self.updatedAt = updatedAt
        self.clockSynced = clockSynced
        self.revision = revision
        self.ended = ended
        self.commands = commands
        self.devices = devices
        layers = nil
    }

    /// Writes the payload, keys in contract order. `writtenDevice`: the
    /// bytes of `devices[0]` when the caller has just written them for the
    /// `device` topic (`DeviceDescriptor.serialized()`); they are copied
    /// instead of written again. They must be that descriptor's bytes.
    public func write(to w: inout JSONWriter, writtenDevice: [UInt8]? = nil) {
        w.beginObject()
        w.key("id"); w.string(id)
        w.key("soundID"); w.string(soundID)
        w.key("soundName"); w.string(soundName)
        w.key("layers")
        if let layers { MixLayer.write(layers, to: &w) } else { w.null() }
        w.key("isPlaying"); w.bool(isPlaying)
        w.key("intendsPlayback"); w.bool(intendsPlayback)
        w.key("updatedAt"); w.string(updatedAt)
        w.key("clockSynced"); w.bool(clockSynced)
        w.key("revision"); w.number(Double(revision))
        w.key("ended"); w.bool(ended)
        w.key("commands")
        w.beginArray()
        for command in commands { w.string(command) }
        w.endArray()
        w.key("devices")
        w.beginArray()
        for (i, device) in devices.enumerated() {
            if i == 0, let writtenDevice { w.raw(writtenDevice) } else { device.write(to: &w) }
        }
        w.endArray()
        w.key("sleepTimer")
        if let sleepTimer { sleepTimer.write(to: &w) } else { w.null() }
        w.endObject()
    }

    /// The payload as published on `session` (see `write(to:writtenDevice:)`).
    public func serialized(writtenDevice: [UInt8]? = nil) -> [UInt8] {
        var w = JSONWriter(capacity: 768)
        write(to: &w, writtenDevice: writtenDevice)
        return w.bytes
    }

    /// The payload as a tree: `serialized()` parsed, so the two cannot differ.
    public var json: JSONValue { JSONValue(writtenPayload: serialized()) }
}
