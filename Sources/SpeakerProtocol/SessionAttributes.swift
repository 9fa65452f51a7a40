/// The retained `session` payload: what a server forwards to the phone as the
/// remote media session's attributes (mqtt-contract.md, "session").
public struct SessionAttributes: Equatable, Sendable {
    /// Session id, stable from the first play until the session ends; nil if there never was one.
    public var id: String?
    public var soundID: String
    public var soundName: String
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

    public init(id: String?, soundID: String, soundName: String, isPlaying: Bool, intendsPlayback: Bool,
                updatedAt: String, clockSynced: Bool, revision: UInt64, ended: Bool, commands: [String],
                devices: [DeviceDescriptor]) {
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
    }

    /// The payload as JSON, keys in contract order.
    public var json: JSONValue {
        .object([
            ("id", id.map { .string($0) } ?? .null),
            ("soundID", .string(soundID)), ("soundName", .string(soundName)),
            ("isPlaying", .bool(isPlaying)), ("intendsPlayback", .bool(intendsPlayback)),
            ("updatedAt", .string(updatedAt)), ("clockSynced", .bool(clockSynced)),
            ("revision", .number(Double(revision))), ("ended", .bool(ended)),
            ("commands", .array(commands.map { .string($0) })),
            ("devices", .array(devices.map(\.json))),
        ])
    }
}
