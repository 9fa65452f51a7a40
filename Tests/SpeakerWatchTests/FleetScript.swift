// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import SpeakerWatch

/// Builds the speaker's payloads (with the speaker's own serialisers) and
/// feeds them to a `Fleet` on a manual clock, collecting what comes out.
struct FleetScript {
    static let prefix = "ambient-speaker"
    var fleet = Fleet(prefix: prefix)
    /// Manual time, milliseconds.
    var now: UInt64 = 0

    static func device(_ id: String = "kitchen", epoch: String? = "e1", level: Double = 0.4) -> DeviceDescriptor {
        DeviceDescriptor(id: id, name: "Kitchen", volume: .absolute(level: level, step: 0.05), audio: .ok,
                         software: "ambient-speaker test", epoch: epoch)
    }

    static func session(_ revision: UInt64, id: String? = "s1", playing: Bool = true, ended: Bool = false,
                        sound: String = "rain", device: DeviceDescriptor = device()) -> SessionAttributes {
        SessionAttributes(id: id, soundID: sound, soundName: "Sound " + sound, isPlaying: playing, intendsPlayback: playing,
                          updatedAt: "2026-12-02T03:00:00.000Z", clockSynced: true, revision: revision, ended: ended,
                          commands: ["pause", "stop"], devices: [device])
    }

    static func message(_ session: SessionAttributes, device: String = "kitchen", retained: Bool = false) -> WatchMessage {
        WatchMessage(topic: "\(prefix)/\(device)/session", payload: session.serialized(), retained: retained)
    }

    static func message(leaf: String, _ payload: [UInt8], device: String = "kitchen", retained: Bool = false) -> WatchMessage {
        WatchMessage(topic: "\(prefix)/\(device)/\(leaf)", payload: payload, retained: retained)
    }

    /// Delivers messages; returns every output.
    mutating func deliver(_ messages: WatchMessage...) -> [FleetOutput] {
        messages.flatMap { fleet.receive($0, now: now) }
    }

    /// The lifecycle events only, as `kind device session-id revision` words.
    mutating func events(_ messages: WatchMessage...) -> [String] {
        messages.flatMap { fleet.receive($0, now: now) }.compactMap { output in
            guard case .lifecycle(let e) = output else { return nil }
            return "\(e.kind.rawValue) \(e.deviceID) \(e.session.id ?? "-") \(e.session.revision)" + (e.inferred ? " inferred" : "")
        }
    }
}
