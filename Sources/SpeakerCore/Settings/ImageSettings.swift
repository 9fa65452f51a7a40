// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The SD card image's settings file (`/boot/firmware/ambient-speaker.json`),
/// decoded and checked byte by byte. A file anyone holding the card can edit:
/// nothing here is trusted until `ImageSettingsDecoder` has accepted it, and
/// no error it gives repeats a secret. Pure value; any thread.
public struct ImageSettings: Equatable, Sendable {
    /// `hostname`; nil keeps the current one.
    public var hostname: String?
    /// `timezone` (a zone name); nil keeps the current one.
    public var timezone: String?
    /// `wifi`.
    public var wifi: WiFi = .unchanged
    /// `sshAuthorizedKeys`: root's key lines; nil keeps the current file.
    public var sshAuthorizedKeys: [String]?
    /// `dac`; nil keeps the current overlay.
    public var dac: DAC?
    /// `mqtt.password`.
    public var mqttPassword: Secret = .keepSaved
    /// `mqtt.caCertificate`: PEM text of the broker's CA; nil: no CA from the settings.
    public var mqttCACertificate: String?
    /// `mqtt.allowPasswordWithoutTLS`: a broker password without TLS is accepted (with a warning), not refused.
    public var allowPasswordWithoutTLS = false
    /// `brokerNetworks`: addresses (CIDR) the service may reach besides the
    /// private ranges of its unit; nil keeps the current drop-in, [] removes it.
    public var brokerNetworks: [String]?
    /// The daemon's keys (`device`, `volume`, `mqtt` without its secrets, `speaker`).
    public var device: JSONValue?
    public var volume: JSONValue?
    public var mqtt: JSONValue?
    public var speaker: JSONValue?

    public init() {}

    /// `wifi`: absent or null leaves Wi-Fi as it is; an empty `ssid` turns it off.
    public enum WiFi: Equatable, Sendable {
        case unchanged
        case off
        case network(country: String, ssid: [UInt8], key: WiFiKey)
    }

    /// How the network is protected. An open network is only ever what
    /// `wifi.open: true` says; keeping the saved key is its own state, which
    /// fails (never falls back to open) when no key is saved for this SSID.
    public enum WiFiKey: Equatable, Sendable {
        case passphrase([UInt8])
        case psk([UInt8])
        case keepSaved
        case open
    }

    /// A secret's three states: a new value, keep what was saved, or none.
    public enum Secret: Equatable, Sendable {
        case set([UInt8])
        case keepSaved
        case none
    }

    /// `dac`: the overlay line and the ALSA device it implies.
    public enum DAC: String, Equatable, Sendable, CaseIterable {
        case hifiberryDAC = "hifiberry-dac"
        case none
    }
}

/// Decodes the settings file with the config's strict JSON parser (UTF-8,
/// duplicate keys, depth) and checks every field's bytes. Errors name the
/// key and never include the value of a secret.
public struct ImageSettingsDecoder: Sendable {
    /// The largest settings file read (a few keys, SSH key lines and a CA chain).
    public static let maxBytes = 64 * 1024

    public init() {}

    public func decode(_ bytes: [UInt8]) throws(ConfigError) -> ImageSettings {
        guard bytes.count <= Self.maxBytes else {
            throw ConfigError(path: "(file)", message: "\(bytes.count) bytes; the settings file may hold at most \(Self.maxBytes)")
        }
        let value: JSONValue
        do { value = try JSONParser(maxDepth: 16).parse(bytes) } catch {
            throw ConfigError(path: "(file)", message: "not valid JSON: \(error)")
        }
        return try decode(value)
    }

    public func decode(_ value: JSONValue) throws(ConfigError) -> ImageSettings {
        var s = ImageSettings()
        var root = try ConfigReader(value, path: "")
        root.skipComments()
        if let name = try root.optionalString("hostname", default: nil) {
            guard SettingsFields.isHostname(name) else {
                throw root.fail("hostname", "letters, digits and '-' (1 to 63, not starting or ending with '-'), got \(JSONValue.string(name).jsonText)")
            }
            s.hostname = name
        }
        if let zone = try root.optionalString("timezone", default: nil) {
            guard SettingsFields.isZoneName(zone) else {
                throw root.fail("timezone", "a zone name such as \"Europe/Berlin\" or \"Etc/UTC\", got \(JSONValue.string(zone).jsonText)")
            }
            s.timezone = zone
        }
        s.wifi = try wifi(&root)
        if let raw = root.raw("sshAuthorizedKeys"), raw != .null {
            s.sshAuthorizedKeys = try SettingsFields.keyLines(raw, path: root.keyPath("sshAuthorizedKeys"))
        }
        if let raw = root.raw("dac"), raw != .null {
            guard let text = raw.stringValue, let dac = ImageSettings.DAC(rawValue: text) else {
                throw root.fail("dac", "\"hifiberry-dac\" (HiFiBerry DAC/MiniAmp, pHAT DAC, PCM5102A boards) or \"none\" (USB audio, HDMI), got \(ConfigReader.show(raw)) (other hats need Raspberry Pi OS and the .deb)")
            }
            s.dac = dac
        }
        if let raw = root.raw("brokerNetworks"), raw != .null {
            s.brokerNetworks = try SettingsFields.networks(raw, path: root.keyPath("brokerNetworks"))
        }
        s.device = try object(&root, "device")
        s.volume = try object(&root, "volume")
        s.speaker = try object(&root, "speaker")
        if s.speaker?["mqtt"]?["passwordFile"] != nil {
            throw ConfigError(path: "speaker.mqtt.passwordFile", message: "set by the image from mqtt.password; give the password instead")
        }
        if case .object(let members)? = try object(&root, "mqtt") {
            var rest: [(key: String, value: JSONValue)] = []
            for m in members {
                switch m.key {
                case "password": s.mqttPassword = try password(m.value)
                case "caCertificate":
                    if m.value != .null { s.mqttCACertificate = try SettingsFields.pem(m.value, path: "mqtt.caCertificate") }
                case "allowPasswordWithoutTLS":
                    guard let allow = m.value.boolValue else {
                        throw ConfigError(path: "mqtt.allowPasswordWithoutTLS", message: "expected true or false, got \(m.value.kindDescription)")
                    }
                    s.allowPasswordWithoutTLS = allow
                case "passwordFile":
                    throw ConfigError(path: "mqtt.passwordFile", message: "set by the image from mqtt.password; give the password instead")
                default: rest.append(m)
                }
            }
            s.mqtt = .object(rest)
        }
        try root.finish()
        return s
    }

    private func object(_ r: inout ConfigReader, _ key: String) throws(ConfigError) -> JSONValue? {
        guard let v = r.raw(key), v != .null else { return nil }
        guard case .object = v else { throw r.fail(key, "expected an object, got \(v.kindDescription)") }
        return v
    }

    private func wifi(_ root: inout ConfigReader) throws(ConfigError) -> ImageSettings.WiFi {
        guard let raw = root.raw("wifi"), raw != .null else { return .unchanged }
        var w = try ConfigReader(raw, path: "wifi")
        let ssidValue = w.raw("ssid") ?? .null
        let countryValue = w.raw("country") ?? .null
        let passphraseValue = w.raw("passphrase") ?? .null
        let open = try w.bool("open", default: false)
        try w.finish()
        guard ssidValue != .null else {
            throw w.fail("ssid", "required: wifi is the whole network (country, ssid and passphrase; null keeps the saved key); an empty ssid turns Wi-Fi off, and no wifi key keeps it as it is")
        }
        guard let ssidText = ssidValue.stringValue else { throw w.fail("ssid", "expected a string, got \(ssidValue.kindDescription)") }
        if ssidText.isEmpty { return .off }
        let ssid = Array(ssidText.utf8)
        guard ssid.count <= 32 else { throw w.fail("ssid", "at most 32 bytes (UTF-8), got \(ssid.count)") }
        guard !ssid.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw w.fail("ssid", "must not contain control characters, got \(JSONValue.string(ssidText).jsonText)")
        }
        guard let country = countryValue.stringValue, country.utf8.count == 2, country.utf8.allSatisfy({ $0 >= 65 && $0 <= 90 }) else {
            throw w.fail("country", "the two-letter ISO 3166 code of where the Pi is (\"GB\", \"DE\", \"US\"), got \(ConfigReader.show(countryValue))")
        }
        let key: ImageSettings.WiFiKey
        if open {
            guard passphraseValue == .null else {
                throw w.fail("passphrase", "must be null when wifi.open is true (an open network has no passphrase)")
            }
            key = .open
        } else if passphraseValue == .null {
            key = .keepSaved
        } else {
            guard let text = passphraseValue.stringValue else {
                throw w.fail("passphrase", "expected a string or null, got \(passphraseValue.kindDescription)")
            }
            key = try SettingsFields.wifiKey(Array(text.utf8))
        }
        return .network(country: country, ssid: ssid, key: key)
    }

    private func password(_ v: JSONValue) throws(ConfigError) -> ImageSettings.Secret {
        if v == .null { return .keepSaved }
        guard let text = v.stringValue else {
            throw ConfigError(path: "mqtt.password", message: "expected a string or null, got \(v.kindDescription)")
        }
        let bytes = Array(text.utf8)
        if bytes.isEmpty { return .none }
        guard bytes.count <= 256 else {
            throw ConfigError(path: "mqtt.password", message: "at most 256 bytes, got \(bytes.count)")
        }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
            throw ConfigError(path: "mqtt.password", message: "must not contain control characters (tab, newline, …); the value is not shown")
        }
        return .set(bytes)
    }
}
