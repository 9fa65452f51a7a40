// SPDX-License-Identifier: Apache-2.0
/// How the speaker reaches its broker. A plain value: build it from the
/// validated config on the main thread and hand it to `MQTTLink.init`.
public struct MQTTSettings: Sendable, Equatable {
    /// Broker host name or address.
    public var host: String
    /// Broker TCP port (1883 plain, 8883 usually for TLS).
    public var port: Int
    /// Stable client id (`ambient-speaker-{deviceId}`); the persistent
    /// session (clean start false) is keyed on it.
    public var clientID: String
    /// MQTT keepalive in seconds (libmosquitto requires at least 5).
    public var keepaliveSeconds: Int
    /// Optional user name.
    public var username: String?
    /// Optional password. Never logged.
    public var password: String?
    /// TLS settings; `nil` for plain TCP.
    public var tls: MQTTTLS?
    /// The last will, published by the broker if the connection dies uncleanly.
    public var will: MQTTWill?
    /// Topic filters subscribed at QoS 1 on every connect.
    public var subscriptions: [String]
    /// Session Expiry Interval sent on CONNECT: how long the broker keeps the
    /// session (and queues QoS 1 messages) while the speaker is away.
    public var sessionExpirySeconds: UInt32
    /// MQTT v5 Maximum Packet Size sent on CONNECT: the broker must not send
    /// the speaker a larger packet (mosquitto drops it), so an oversize
    /// command never reaches the speaker's memory. The default, 64 KiB, is
    /// 16 times the command limit, so a moderately oversize command is still
    /// answered `too-large`. 0 sends no limit. Not available on 3.1.1.
    public var maximumPacketSize: UInt32
    /// Reconnect backoff floor in seconds (`ReconnectBackoff`; millisecond resolution).
    public var reconnectMinSeconds: Double
    /// Reconnect backoff ceiling in seconds.
    public var reconnectMaxSeconds: Double

    /// Creates settings; every optional part defaults to "off".
    public init(
        host: String,
        port: Int = 1883,
        clientID: String,
        keepaliveSeconds: Int = 30,
        username: String? = nil,
        password: String? = nil,
        tls: MQTTTLS? = nil,
        will: MQTTWill? = nil,
        subscriptions: [String] = [],
        sessionExpirySeconds: UInt32 = 3600,
        maximumPacketSize: UInt32 = 65_536,
        reconnectMinSeconds: Double = 0.5,
        reconnectMaxSeconds: Double = 30
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.keepaliveSeconds = keepaliveSeconds
        self.username = username
        self.password = password
        self.tls = tls
        self.will = will
        self.subscriptions = subscriptions
        self.sessionExpirySeconds = sessionExpirySeconds
        self.maximumPacketSize = maximumPacketSize
        self.reconnectMinSeconds = reconnectMinSeconds
        self.reconnectMaxSeconds = reconnectMaxSeconds
    }
}

extension MQTTSettings {
    /// Whether every CONNECT would carry the password in clear (a password and no TLS).
    public var sendsPasswordInClear: Bool { password != nil && tls == nil }
}

/// TLS material for `mosquitto_tls_set`.
public struct MQTTTLS: Sendable, Equatable {
    /// PEM file of trusted CA certificates.
    public var caFile: String
    /// Optional client certificate (PEM); needs `keyFile`.
    public var certFile: String?
    /// Optional client private key (PEM, unencrypted).
    public var keyFile: String?

    /// Creates TLS settings.
    public init(caFile: String, certFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }
}

/// The last-will message registered with the broker before connecting.
public struct MQTTWill: Sendable, Equatable {
    /// Topic of the will (the speaker's `availability`).
    public var topic: String
    /// Payload of the will (`offline`).
    public var payload: [UInt8]
    /// QoS of the will.
    public var qos: Int
    /// Whether the broker retains the will.
    public var retain: Bool

    /// Creates a will.
    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
