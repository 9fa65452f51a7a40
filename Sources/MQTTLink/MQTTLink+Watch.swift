// SPDX-License-Identifier: Apache-2.0
import SpeakerWatch

/// The link as a watcher's way to the broker (`ambient-speaker watch`).
extension MQTTLink: WatchBrokerLink {
    /// Publishes a command at QoS 1, not retained; false when not connected
    /// or libmosquitto refused it. Main thread.
    public func publishCommand(topic: String, payload: [UInt8]) -> Bool {
        if case .queued = publish(topic: topic, payload: payload, qos: 1, retain: false) { return true }
        return false
    }
}
