// SPDX-License-Identifier: Apache-2.0
/// The topics of one speaker under its root `{prefix}/{deviceId}`
/// (mqtt-contract.md, "Topics"), and the payloads of its availability topic.
///
/// The one place topic names are spelled: the core, the MQTT service, the
/// link's will and subscriptions, and the Home Assistant discovery config all
/// build their topics from this. Built once per root (the root changes only
/// with a restart), so the hot publication path builds no strings.
public struct SpeakerTopics: Equatable, Sendable {
    /// `{prefix}/{deviceId}`.
    public let root: String
    /// Retained device descriptor.
    public let device: String
    /// Retained session attributes.
    public let session: String
    /// Retained list of sounds.
    public let catalog: String
    /// Commands from controllers.
    public let command: String
    /// The one answer to every command.
    public let result: String
    /// Physical input events (not retained).
    public let event: String
    /// Retained `online`/`offline` (the will says `offline`).
    public let availability: String
    /// Retained schedule rules, whether the clock is synchronised, and the next rule to fire.
    public let schedules: String

    /// `{root}/artwork/{id}`: the retained image (raw PNG or JPEG bytes) of
    /// catalog entry `id`; an empty retained payload clears it.
    public func artwork(_ id: String) -> String { root + "/artwork/" + id }

    /// The availability payload while connected.
    public static let online: [UInt8] = Array("online".utf8)
    /// The availability payload after a clean stop, and the will's.
    public static let offline: [UInt8] = Array("offline".utf8)

    public init(root: String) {
        self.root = root
        device = root + "/device"
        session = root + "/session"
        catalog = root + "/catalog"
        command = root + "/command"
        result = root + "/command/result"
        event = root + "/event"
        availability = root + "/availability"
        schedules = root + "/schedules"
    }
}
