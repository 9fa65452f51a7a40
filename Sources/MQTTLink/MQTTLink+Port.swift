// SPDX-License-Identifier: Apache-2.0
// The link's events, publish outcomes and errors are the MQTT port's values;
// its clients see them with the link.
@_exported import SpeakerPorts

/// The link is the MQTT service's client (the MQTT port).
extension MQTTLink: MQTTClient {}
