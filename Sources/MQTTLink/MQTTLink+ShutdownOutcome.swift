// SPDX-License-Identifier: Apache-2.0
import SpeakerPorts

extension MQTTLink {
    /// How `shutdown` ended: the MQTT port's outcome.
    public typealias ShutdownOutcome = MQTTShutdownOutcome
}
