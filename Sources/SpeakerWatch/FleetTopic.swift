// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// A topic of the fleet a watcher follows, parsed:
/// `{prefix}/{deviceId}/{leaf}` with one of the leaves a reader reads.
/// Pure value; any thread.
public struct FleetTopic: Equatable, Sendable {
    /// The retained and result topics a reader follows.
    public enum Leaf: String, CaseIterable, Sendable {
        case availability, device, catalog, session
        case result = "command/result"
    }

    public var deviceID: String
    public var leaf: Leaf

    public init(deviceID: String, leaf: Leaf) {
        self.deviceID = deviceID
        self.leaf = leaf
    }

    /// Parses `topic` under `prefix`; nil for a topic that is not one of a
    /// speaker's (another leaf such as `event`, or a malformed device id).
    public init?(_ topic: String, prefix: String) {
        let head = prefix + "/"
        guard topic.hasPrefix(head) else { return nil }
        let rest = topic.dropFirst(head.count)
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let id = String(rest[..<slash])
        guard Self.isDeviceID(id), let leaf = Leaf(rawValue: String(rest[rest.index(after: slash)...])) else { return nil }
        self.init(deviceID: id, leaf: leaf)
    }

    /// The topic's text under `prefix`.
    public func text(prefix: String) -> String { "\(prefix)/\(deviceID)/\(leaf.rawValue)" }

    /// What a watcher subscribes to: every speaker under `prefix` with
    /// single-level wildcards, or, given `devices`, each one's topics by name
    /// (a broker such as RabbitMQ 3.x hands retained messages only to exact
    /// subscriptions).
    public static func subscriptions(prefix: String, devices: [String] = []) -> [String] {
        if devices.isEmpty { return Leaf.allCases.map { "\(prefix)/+/\($0.rawValue)" } }
        return devices.flatMap { id in Leaf.allCases.map { FleetTopic(deviceID: id, leaf: $0).text(prefix: prefix) } }
    }

    /// The contract's device id: `[a-z0-9][a-z0-9-]{0,62}`.
    public static func isDeviceID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard (1...63).contains(bytes.count) else { return false }
        func ok(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) }
        return ok(bytes[0]) && bytes.dropFirst().allSatisfy { ok($0) || $0 == UInt8(ascii: "-") }
    }
}
