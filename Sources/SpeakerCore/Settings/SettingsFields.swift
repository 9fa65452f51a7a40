// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol

/// The byte rules of the image settings' fields. Each check looks at the
/// UTF-8 bytes, not at characters, and none of the messages for a secret
/// shows its value. Pure; any thread.
enum SettingsFields {
    /// An RFC 1123 label: letters, digits, `-`, 1-63 bytes, no `-` at either end.
    static func isHostname(_ name: String) -> Bool {
        let b = Array(name.utf8)
        func alnum(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) }
        guard (1...63).contains(b.count), alnum(b[0]), alnum(b[b.count - 1]) else { return false }
        return b.allSatisfy { alnum($0) || $0 == 45 }
    }

    /// A tz database zone name ("Europe/Berlin", "Etc/UTC", "EST5EDT"): the
    /// daemon's zone-name rule, and every part starting with a capital
    /// letter, which leaves out the other files in zoneinfo: `localtime` (a
    /// link back to /etc/localtime), `posixrules`, `leapseconds`, the tables
    /// (`zone.tab`, `tzdata.zi`, …) and the `right/` and `posix/` trees.
    static func isZoneName(_ name: String) -> Bool {
        ConfigDecoder.isZoneName(name) && name != "SECURITY"
            && name.split(separator: "/").allSatisfy { part in part.utf8.first.map { $0 >= 65 && $0 <= 90 } ?? false }
    }

    /// A WPA2 personal key: 8-63 printable ASCII bytes (a passphrase) or 64 hex digits (the PSK itself).
    static func wifiKey(_ bytes: [UInt8]) throws(ConfigError) -> ImageSettings.WiFiKey {
        if bytes.isEmpty {
            throw ConfigError(path: "wifi.passphrase", message: "empty; for an open network set wifi.open to true, null keeps the saved key")
        }
        if bytes.count == 64, let psk = hexBytes(bytes) { return .psk(psk) }
        guard (8...63).contains(bytes.count) else {
            throw ConfigError(path: "wifi.passphrase", message: "8 to 63 printable ASCII characters or 64 hex digits (WPA2 personal), got \(bytes.count) bytes; the value is not shown")
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) else {
            throw ConfigError(path: "wifi.passphrase", message: "only printable ASCII (space to ~): no tab, newline or non-ASCII letters; the value is not shown")
        }
        return .passphrase(bytes)
    }

    static func hexBytes(_ text: [UInt8]) -> [UInt8]? {
        func digit(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
        guard text.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < text.count {
            guard let hi = digit(text[i]), let lo = digit(text[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }

    static let keyTypes = ["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
                           "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com"]

    /// `sshAuthorizedKeys`: a list of OpenSSH public key lines `TYPE BASE64 [COMMENT]`,
    /// one line each (no control characters, so no key can add a line or options).
    static func keyLines(_ raw: JSONValue, path: String) throws(ConfigError) -> [String] {
        guard case .array(let items) = raw else {
            throw ConfigError(path: path, message: "expected a list of public key lines, got \(raw.kindDescription)")
        }
        guard items.count <= 64 else { throw ConfigError(path: path, message: "at most 64 keys, got \(items.count)") }
        var lines: [String] = []
        for (i, item) in items.enumerated() {
            let at = "\(path)[\(i)]"
            guard let line = item.stringValue else { throw ConfigError(path: at, message: "expected a key line, got \(item.kindDescription)") }
            let b = Array(line.utf8)
            guard b.count <= 16 * 1024, !b.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                throw ConfigError(path: at, message: "one line of at most 16 KiB without control characters (newline, tab, …)")
            }
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            let base64OK = parts.count >= 2 && !parts[1].isEmpty && parts[1].utf8.allSatisfy { c in
                (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47 || c == 61
            }
            guard let type = parts.first, keyTypes.contains(String(type)), base64OK else {
                throw ConfigError(path: at, message: "not an OpenSSH public key line (\(keyTypes.joined(separator: ", ")) then the key in base64 and an optional comment): \(JSONValue.string(String(line.prefix(40))).jsonText)…")
            }
            lines.append(line)
        }
        return lines
    }

    /// `mqtt.caCertificate`: one or more PEM `CERTIFICATE` blocks, ASCII only, at most 32 KiB.
    static func pem(_ raw: JSONValue, path: String) throws(ConfigError) -> String {
        guard let text = raw.stringValue else { throw ConfigError(path: path, message: "expected PEM text or null, got \(raw.kindDescription)") }
        let b = Array(text.utf8)
        guard b.count <= 32 * 1024 else { throw ConfigError(path: path, message: "at most 32 KiB, got \(b.count) bytes") }
        guard b.allSatisfy({ ($0 >= 0x20 && $0 <= 0x7E) || $0 == 0x0A || $0 == 0x0D }) else {
            throw ConfigError(path: path, message: "PEM is ASCII lines: no control characters other than newlines")
        }
        var blocks = 0
        var inside = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: true) {
            let line = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine[...]
            if line.isEmpty { continue }
            if line == "-----BEGIN CERTIFICATE-----" {
                guard !inside else { break }
                inside = true
            } else if line == "-----END CERTIFICATE-----" {
                guard inside else { inside = true; break }
                inside = false
                blocks += 1
            } else if !inside || !line.utf8.allSatisfy({ c in (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47 || c == 61 }) {
                inside = true
                blocks = 0
                break
            }
        }
        guard blocks > 0, !inside else {
            throw ConfigError(path: path, message: "expected PEM certificates: lines \"-----BEGIN CERTIFICATE-----\", base64, \"-----END CERTIFICATE-----\" (in JSON, newlines as \\n)")
        }
        return text.hasSuffix("\n") ? text : text + "\n"
    }

    /// `brokerNetworks`: IPv4 or IPv6 prefixes in CIDR form (`100.64.0.0/10`,
    /// `2001:db8::/32`) or single addresses; never a prefix of length 0 ("any").
    static func networks(_ raw: JSONValue, path: String) throws(ConfigError) -> [String] {
        guard case .array(let items) = raw else {
            throw ConfigError(path: path, message: "expected a list of addresses or prefixes such as \"100.64.0.0/10\", got \(raw.kindDescription)")
        }
        guard items.count <= 32 else { throw ConfigError(path: path, message: "at most 32 prefixes, got \(items.count)") }
        var out: [String] = []
        var prefixes: [AddressPrefix] = []
        for (i, item) in items.enumerated() {
            guard let text = item.stringValue, let prefix = AddressPrefix(text) else {
                throw ConfigError(path: "\(path)[\(i)]", message: "expected an IPv4 or IPv6 address or prefix (\"100.64.0.0/10\", \"203.0.113.7\", \"2001:db8::/32\"), got \(ConfigReader.show(item))")
            }
            guard prefix.length > 0 else {
                throw ConfigError(path: "\(path)[\(i)]", message: "a prefix of length 0 is every address; name the broker's network instead")
            }
            out.append(text)
            prefixes.append(prefix)
        }
        for v6 in [false, true] where AddressPrefix.coverEverything(prefixes.filter { $0.isIPv6 == v6 }) {
            throw ConfigError(path: path, message: "these prefixes together cover every \(v6 ? "IPv6" : "IPv4") address; name the broker's network instead")
        }
        return out
    }
}
