// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// One change to the target root, with paths as seen on the Pi (`/etc/hostname`).
public enum FileChange: Equatable, Sendable {
    /// Replace (or create) a file; `owner` says who may read a secret.
    case write(path: String, bytes: [UInt8], mode: UInt32, owner: FileOwner)
    /// Replace (or create) a symbolic link.
    case symlink(path: String, target: String)
    /// Remove a file or link if it is there.
    case remove(path: String)

    public var path: String {
        switch self {
        case .write(let p, _, _, _), .symlink(let p, _), .remove(let p): return p
        }
    }
}

/// Who owns a written file.
public enum FileOwner: Equatable, Sendable {
    case root
    /// The speaker's service user (its password file).
    case serviceUser
    /// root, with the service user's group (the daemon's config).
    case rootWithServiceGroup
}

/// What the planner needs to know of the target root's current files.
public struct SettingsSystemView: Sendable {
    /// The daemon config the image shipped (`config.base.json`).
    public var baseConfig: [UInt8]
    /// Current contents, nil when the file is absent.
    public var hosts: String?
    public var hostname: String?
    public var wpaConfig: String?
    public var firmwareCustom: String?
    public var configTxt: String?
    /// Whether the broker password was saved by an earlier apply.
    public var passwordSaved: Bool
    /// Zone names whose file exists under `/usr/share/zoneinfo`.
    public var zoneExists: @Sendable (String) -> Bool

    public init(baseConfig: [UInt8], hosts: String? = nil, hostname: String? = nil, wpaConfig: String? = nil,
                firmwareCustom: String? = nil, configTxt: String? = nil, passwordSaved: Bool = false,
                zoneExists: @escaping @Sendable (String) -> Bool) {
        self.baseConfig = baseConfig
        self.hosts = hosts
        self.hostname = hostname
        self.wpaConfig = wpaConfig
        self.firmwareCustom = firmwareCustom
        self.configTxt = configTxt
        self.passwordSaved = passwordSaved
        self.zoneExists = zoneExists
    }
}

/// Everything an accepted settings file changes, derived before anything is
/// touched: the adapter stages every file, then renames them all into place.
public struct SettingsPlan: Equatable, Sendable {
    public var changes: [FileChange] = []
    /// Journal lines (info): what is applied. Never a secret.
    public var notices: [String] = []
    /// Journal lines (warning), e.g. a broker password without TLS.
    public var warnings: [String] = []
    /// The settings file with its secrets replaced by null, to write over the
    /// old bytes in place; nil when it holds no secret.
    public var scrubbed: [UInt8]?
}

/// Where the image keeps what the settings produce.
public enum SettingsPaths {
    public static let hostname = "/etc/hostname"
    public static let hosts = "/etc/hosts"
    public static let localtime = "/etc/localtime"
    public static let timezone = "/etc/timezone"
    public static let zoneinfo = "/usr/share/zoneinfo"
    public static let authorizedKeys = "/root/.ssh/authorized_keys"
    public static let wpaConfig = "/etc/wpa_supplicant/wpa_supplicant-wlan0.conf"
    public static let wpaWants = "/etc/systemd/system/sys-subsystem-net-devices-wlan0.device.wants/wpa_supplicant@wlan0.service"
    public static let wpaUnit = "/usr/lib/systemd/system/wpa_supplicant@.service"
    public static let firmwareCustom = "/etc/default/raspi-firmware-custom"
    public static let configTxt = "/boot/firmware/config.txt"
    public static let baseConfig = "/usr/share/ambient-speaker-image/config.base.json"
    public static let config = "/etc/ambient-speaker/config.json"
    public static let password = "/etc/ambient-speaker/mqtt-password"
    public static let caCertificate = "/etc/ambient-speaker/mqtt-ca.pem"
    public static let networkDropIn = "/etc/systemd/system/ambient-speaker.service.d/broker-networks.conf"
    /// The applied settings document (`AppliedSettings`): what a later file's missing keys keep.
    public static let appliedSettings = "/var/lib/ambient-speaker-image/applied.json"
    /// The SHA-256 of the settings file's bytes as the applier left them
    /// (read, or written when blanking), written by the applier itself: the
    /// boot wrapper skips a file whose hash equals it.
    public static let appliedHash = "/var/lib/ambient-speaker-image/applied.sha256"

    /// Every file an apply may write or remove: before staging, the applier
    /// removes what a power cut left beside any of them, whether or not this
    /// apply changes that file.
    public static let managed = [hostname, hosts, localtime, timezone, authorizedKeys, wpaConfig, wpaWants,
                                 firmwareCustom, configTxt, config, password, caCertificate, networkDropIn, appliedSettings, appliedHash]
}

extension ImageSettings {
    /// The changes these settings make to a root that currently looks like
    /// `view`, or the error that makes the whole file invalid. `raw` is the
    /// file's parsed value (for the copy with its secrets blanked). Pure.
    public func plan(raw: JSONValue, view: SettingsSystemView) throws(ConfigError) -> SettingsPlan {
        var plan = SettingsPlan()
        if let zone = timezone, !view.zoneExists(zone) {
            throw ConfigError(path: "timezone", message: "no zone \(JSONValue.string(zone).jsonText) in \(SettingsPaths.zoneinfo) (\"Europe/Berlin\", \"Etc/UTC\")")
        }
        let wifiChanges = try WiFiConfig.changes(wifi, saved: view.wpaConfig)
        let config = try daemonConfig(view: view, warnings: &plan.warnings)

        if let name = hostname {
            plan.changes.append(.write(path: SettingsPaths.hostname, bytes: Array("\(name)\n".utf8), mode: 0o644, owner: .root))
            plan.changes.append(.write(path: SettingsPaths.hosts, bytes: Array(Self.hosts(view.hosts ?? "", name: name).utf8), mode: 0o644, owner: .root))
            plan.notices.append("hostname: \(name) (mDNS: \(name).local)")
        }
        if let zone = timezone {
            plan.changes.append(.symlink(path: SettingsPaths.localtime, target: "\(SettingsPaths.zoneinfo)/\(zone)"))
            plan.changes.append(.write(path: SettingsPaths.timezone, bytes: Array("\(zone)\n".utf8), mode: 0o644, owner: .root))
            plan.notices.append("time zone: \(zone)")
        }
        if let keys = sshAuthorizedKeys {
            plan.changes.append(.write(path: SettingsPaths.authorizedKeys, bytes: Array(keys.map { $0 + "\n" }.joined().utf8), mode: 0o600, owner: .root))
            plan.notices.append("ssh: \(keys.count) authorized key(s) for root")
        }
        plan.changes += wifiChanges.changes
        plan.notices += wifiChanges.notices
        if let dac {
            let overlay = dac == .none ? "# dtoverlay=none" : "dtoverlay=\(dac.rawValue)"
            for (path, current) in [(SettingsPaths.firmwareCustom, view.firmwareCustom), (SettingsPaths.configTxt, view.configTxt)] {
                guard let current else { continue }
                let edited = Self.withOverlay(current, overlay: overlay)
                if edited != current { plan.changes.append(.write(path: path, bytes: Array(edited.utf8), mode: 0o644, owner: .root)) }
            }
            plan.notices.append("dac: \(dac.rawValue)")
        }
        switch mqttPassword {
        case .set(let password):
            plan.changes.append(.write(path: SettingsPaths.password, bytes: password, mode: 0o600, owner: .serviceUser))
            plan.notices.append("mqtt: password in \(SettingsPaths.password) (0600)")
        case .none where view.passwordSaved:
            plan.changes.append(.remove(path: SettingsPaths.password))
            plan.notices.append("mqtt: no password (\(SettingsPaths.password) removed)")
        case .none, .keepSaved: break
        }
        if let pem = mqttCACertificate {
            plan.changes.append(.write(path: SettingsPaths.caCertificate, bytes: Array(pem.utf8), mode: 0o644, owner: .root))
            plan.notices.append("mqtt: broker CA in \(SettingsPaths.caCertificate)")
        }
        if let networks = brokerNetworks {
            if networks.isEmpty {
                plan.changes.append(.remove(path: SettingsPaths.networkDropIn))
            } else {
                let text = "# Written by ambient-speaker apply-settings from brokerNetworks in ambient-speaker.json.\n"
                    + "[Service]\nIPAddressAllow=\(networks.joined(separator: " "))\n"
                plan.changes.append(.write(path: SettingsPaths.networkDropIn, bytes: Array(text.utf8), mode: 0o644, owner: .root))
            }
            plan.notices.append("broker networks: \(networks.isEmpty ? "private ranges only" : networks.joined(separator: " ") + " besides the private ranges")")
        }
        plan.changes.append(.write(path: SettingsPaths.config, bytes: Array((config.prettyText + "\n").utf8), mode: 0o640, owner: .rootWithServiceGroup))
        plan.scrubbed = Self.scrubbed(raw)
        return plan
    }

    /// The daemon's config: the image's base config, the DAC's ALSA device,
    /// `device`, `volume`, `mqtt` (its secrets as files), then `speaker` over
    /// all; checked by the daemon's own decoder.
    func daemonConfig(view: SettingsSystemView, warnings: inout [String]) throws(ConfigError) -> JSONValue {
        let base: JSONValue
        do { base = try JSONParser(maxDepth: 16).parse(view.baseConfig) } catch {
            throw ConfigError(path: SettingsPaths.baseConfig, message: "not valid JSON: \(error)")
        }
        var config = base
        switch dac {
        case .hifiberryDAC?: config = JSONMerge.merge(config, .object([("audio", .object([("device", .string("hw:CARD=sndrpihifiberry"))]))]))
        case .none?: config = JSONMerge.merge(config, .object([("audio", .object([("device", .string("default"))]))]))
        case nil: break
        }
        var image: [(key: String, value: JSONValue)] = []
        if let device { image.append(("device", device)) }
        if let volume { image.append(("volume", volume)) }
        var mqttMembers: [(key: String, value: JSONValue)] = []
        if case .object(let m)? = mqtt { mqttMembers = m }
        switch mqttPassword {
        case .set: mqttMembers.append(("passwordFile", .string(SettingsPaths.password)))
        case .keepSaved where view.passwordSaved: mqttMembers.append(("passwordFile", .string(SettingsPaths.password)))
        case .keepSaved, .none: break
        }
        if mqttCACertificate != nil { mqttMembers.append(("tls", .object([("caFile", .string(SettingsPaths.caCertificate))]))) }
        if mqtt != nil || !mqttMembers.isEmpty { image.append(("mqtt", .object(mqttMembers))) }
        config = JSONMerge.merge(config, .object(image))
        if let speaker { config = JSONMerge.merge(config, speaker) }
        let resolved: SpeakerConfig
        do { resolved = try ConfigDecoder(hostname: hostname ?? view.hostname ?? "ambient-speaker").decode(config) } catch {
            throw ConfigError(path: "speaker settings", message: error.description)
        }
        if resolved.mqtt.passwordFile != nil && resolved.mqtt.tls == nil {
            guard allowPasswordWithoutTLS else {
                throw ConfigError(path: "mqtt.caCertificate", message: "TLS is off but a broker password is \(mqttPassword == .keepSaved ? "saved" : "given"): it would go to \(resolved.mqtt.host):\(resolved.mqtt.port) in clear. Set mqtt.caCertificate (and port 8883), remove the password with \"password\": \"\", or say mqtt.allowPasswordWithoutTLS: true")
            }
            warnings.append("mqtt: the broker password goes to \(resolved.mqtt.host):\(resolved.mqtt.port) without TLS; anyone on the network can read it (set mqtt.caCertificate and port 8883)")
        }
        return config
    }

    /// /etc/hosts with its `127.0.1.1` line naming `name`.
    static func hosts(_ current: String, name: String) -> String {
        var lines = current.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        var found = false
        for i in lines.indices where lines[i].hasPrefix("127.0.1.1 ") || lines[i].hasPrefix("127.0.1.1\t") {
            lines[i] = "127.0.1.1\t\(name)"
            found = true
        }
        if !found { lines.append("127.0.1.1\t\(name)") }
        return lines.joined(separator: "\n") + "\n"
    }

    static let overlayMarker = "# ambient-speaker dac (set from ambient-speaker.json):"

    /// A firmware config with the line after the image's marker set to
    /// `overlay` (the marker and the line appended when absent). Lines are
    /// split on LF bytes and a CR before it is dropped (Swift sees CRLF as
    /// one character, so a config.txt edited on Windows would never match);
    /// a file with CRLF line ends keeps them.
    static func withOverlay(_ current: String, overlay: String) -> String {
        let crlf = current.utf8.firstIndex(of: 0x0A).map { $0 > current.utf8.startIndex && current.utf8[current.utf8.index(before: $0)] == 0x0D } ?? false
        var lines = current.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            String(line.last == "\r" ? line.dropLast() : line[...])
        }
        let trailingNewline = lines.last == ""
        if trailingNewline { lines.removeLast() }
        if let i = lines.firstIndex(of: overlayMarker) {
            let next = i + 1
            if next < lines.count, lines[next].hasPrefix("dtoverlay=") || lines[next].hasPrefix("# dtoverlay=") {
                lines[next] = overlay
            } else {
                lines.insert(overlay, at: next)
            }
        } else {
            lines += [overlayMarker, overlay]
        }
        let end = crlf ? "\r\n" : "\n"
        return lines.joined(separator: end) + end
    }

    /// The file's value with `wifi.passphrase` and `mqtt.password` set to null
    /// (when they hold a value), as indented text; nil when there is nothing to blank.
    static func scrubbed(_ raw: JSONValue) -> [UInt8]? {
        guard case .object(var members) = raw else { return nil }
        var changed = false
        for (section, key) in [("wifi", "passphrase"), ("mqtt", "password")] {
            guard let i = members.firstIndex(where: { $0.key == section }), case .object(var inner) = members[i].value,
                  let j = inner.firstIndex(where: { $0.key == key }), let s = inner[j].value.stringValue, !s.isEmpty else { continue }
            inner[j].value = .null
            members[i].value = .object(inner)
            changed = true
        }
        return changed ? Array((JSONValue.object(members).prettyText + "\n").utf8) : nil
    }
}

/// jq's `*`: objects merge member by member, recursively; anything else is replaced.
enum JSONMerge {
    static func merge(_ a: JSONValue, _ b: JSONValue) -> JSONValue {
        guard case .object(var left) = a, case .object(let right) = b else { return b }
        for member in right {
            if let i = left.firstIndex(where: { $0.key == member.key }) {
                left[i].value = merge(left[i].value, member.value)
            } else {
                left.append(member)
            }
        }
        return .object(left)
    }
}
