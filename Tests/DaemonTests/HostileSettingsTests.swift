// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Hostile settings files against `ambient-speaker apply-settings`: a root
/// where a good file was applied (Wi-Fi key, password, config all saved),
/// then each file below. Every one must be refused with exit 1, leave the
/// root byte-identical (contents, modes, owners, links), and leave neither
/// secret anywhere but the password's 0600 file: not in the output (journal
/// and console), not in the 0600 error file, not under the root.
@Suite(.serialized) struct HostileSettingsTests {
    static let good = SettingsRoot.good
    static let pass = SettingsRoot.passphrase
    static let pw = SettingsRoot.password

    static func replacing(_ a: String, _ b: String) -> [UInt8] { Array(good.replacingOccurrences(a, with: b).utf8) }
    static func wifi(_ inner: String) -> [UInt8] {
        replacing("\"wifi\": { \"country\": \"DE\", \"ssid\": \"Home [5G]\", \"passphrase\": \"\(pass)\" }", "\"wifi\": \(inner)")
    }
    static func passphrase(_ json: String) -> [UInt8] { replacing("\"passphrase\": \"\(pass)\"", "\"passphrase\": \(json)") }
    static func key(_ name: String, _ json: String) -> [UInt8] { replacing("\"dac\": \"hifiberry-dac\"", "\"\(name)\": \(json)") }
    static func bytes(_ prefix: String, _ raw: [UInt8], _ suffix: String) -> [UInt8] { Array(prefix.utf8) + raw + Array(suffix.utf8) }

    /// The files: (what it tries, its bytes). Each holds both secrets where it can.
    static var files: [(String, [UInt8])] {
        let head = "{\"mqtt\": {\"password\": \"\(pw)\"}, \"wifi\": {\"country\": \"DE\", \"ssid\": \""
        let tail = "\", \"passphrase\": \"\(pass)\"}}"
        var f: [(String, [UInt8])] = [
            ("trailing comma at the end", Array((good.dropLast() + ",}").utf8)),
            ("trailing comma in wifi", replacing("\"passphrase\": \"\(pass)\" }", "\"passphrase\": \"\(pass)\", }")),
            ("duplicate mqtt.password", replacing("\"password\": \"\(pw)\"", "\"password\": \"\(pw)\", \"password\": \"x\(pw)\"")),
            ("duplicate top-level wifi", replacing("\"dac\": \"hifiberry-dac\"", "\"wifi\": null, \"dac\": \"hifiberry-dac\"")),
            ("over 64 KiB", replacing("a settings file for the tests", String(repeating: "padding ", count: 9000))),
            ("invalid UTF-8 in the SSID", bytes(head, [0xC3, 0x28], tail)),
            ("overlong UTF-8 (0xC0 0xAF)", bytes(head, [0xC0, 0xAF], tail)),
            ("UTF-16 surrogate in UTF-8 bytes", bytes(head, [0xED, 0xA0, 0x80], tail)),
            ("raw NUL in a string", bytes(head, [0x41, 0x00, 0x42], tail)),
            ("raw newline in a string", bytes(head, [0x41, 0x0A, 0x42], tail)),
            ("UTF-8 byte order mark", [0xEF, 0xBB, 0xBF] + Array(good.utf8)),
            ("ssid with an escaped newline", replacing("Home [5G]", "a\\nnetwork={")),
            ("ssid with \\u0000", replacing("Home [5G]", "a\\u0000b")),
            ("ssid with DEL", replacing("Home [5G]", "a\\u007fb")),
            ("ssid of 33 bytes", replacing("Home [5G]", String(repeating: "s", count: 33))),
            ("ssid of 20 é (40 bytes)", replacing("Home [5G]", String(repeating: "é", count: 20))),
            ("ssid a number", replacing("\"Home [5G]\"", "5")),
            ("passphrase of 7 bytes", passphrase("\"1234567\"")),
            ("passphrase of 64 non-hex bytes", passphrase("\"\(String(repeating: "g", count: 64))\"")),
            ("passphrase of 65 bytes", passphrase("\"\(String(repeating: "p", count: 65))\"")),
            ("passphrase with a tab", passphrase("\"\(pass)\\t\"")),
            ("passphrase with a newline", passphrase("\"\(pass)\\nx\"")),
            ("passphrase with é", passphrase("\"\(pass)é\"")),
            ("passphrase empty without open", passphrase("\"\"")),
            ("passphrase a number", passphrase("12345678")),
            ("open and a passphrase", replacing("\"passphrase\": \"\(pass)\"", "\"passphrase\": \"\(pass)\", \"open\": true")),
            ("open not a boolean", replacing("\"passphrase\": \"\(pass)\"", "\"open\": \"yes\"")),
            ("keep with a new SSID", replacing("\"ssid\": \"Home [5G]\", \"passphrase\": \"\(pass)\"", "\"ssid\": \"Elsewhere\", \"passphrase\": null")),
            ("unknown wifi key psk", replacing("\"passphrase\": \"\(pass)\"", "\"passphrase\": \"\(pass)\", \"psk\": \"\(pass)\"")),
            ("wifi a string", wifi("\"\(pass)\"")),
            ("country lower case", replacing("\"country\": \"DE\"", "\"country\": \"de\"")),
            ("country of three letters", replacing("\"country\": \"DE\"", "\"country\": \"DEU\"")),
            ("country missing", replacing("\"country\": \"DE\", ", "")),
            ("hostname starting with -", replacing("\"speaker-one\",\n  \"timezone\"", "\"-one\",\n  \"timezone\"")),
            ("hostname with a dot", replacing("\"hostname\": \"speaker-one\"", "\"hostname\": \"speaker.one\"")),
            ("hostname of 64 bytes", replacing("\"hostname\": \"speaker-one\"", "\"hostname\": \"\(String(repeating: "h", count: 64))\"")),
            ("hostname with a newline", replacing("\"hostname\": \"speaker-one\"", "\"hostname\": \"a\\nb\"")),
            ("timezone climbing out", replacing("Europe/Berlin", "../../../etc/passwd")),
            ("timezone absent from zoneinfo", replacing("Europe/Berlin", "Mars/Olympus_Mons")),
            ("ssh keys a string", replacing("[\"\(SettingsRoot.sshKey)\"]", "\"\(SettingsRoot.sshKey)\"")),
            ("ssh key with a second line", replacing(SettingsRoot.sshKey, SettingsRoot.sshKey + "\\nssh-ed25519 AAAAevil")),
            ("ssh key with options", replacing(SettingsRoot.sshKey, "command=\\\"/bin/sh\\\" " + SettingsRoot.sshKey)),
            ("ssh key of type dss", replacing("ssh-ed25519 AAAA", "ssh-dss AAAA")),
            ("ssh key without base64", replacing(SettingsRoot.sshKey, "ssh-ed25519 !!!")),
            ("dac unknown", replacing("\"hifiberry-dac\"", "\"hifiberry-dacplus\"")),
            ("mqtt.password with a newline", replacing("\"password\": \"\(pw)\"", "\"password\": \"\(pw)\\n\"")),
            ("mqtt.password a number", replacing("\"password\": \"\(pw)\"", "\"password\": 4711")),
            ("mqtt.password of 300 bytes", replacing("\"password\": \"\(pw)\"", "\"password\": \"\(pw)\(String(repeating: "p", count: 300))\"")),
            ("mqtt.passwordFile given", replacing("\"password\": \"\(pw)\"", "\"password\": \"\(pw)\", \"passwordFile\": \"/etc/shadow\"")),
            ("speaker.mqtt.passwordFile given", replacing("\"board\": { \"kind\": \"simulated\" }", "\"mqtt\": { \"passwordFile\": \"/etc/shadow\" }, \"board\": { \"kind\": \"simulated\" }")),
            ("caCertificate not PEM", replacing(SettingsRoot.pem.replacingNewlines, "\(pw)")),
            ("caCertificate without END", replacing("\\n-----END CERTIFICATE-----\\n", "\\n")),
            ("caCertificate with a control character", replacing("MIIBszCC", "MII\\u0007szCC")),
            ("volume.mode unknown (the daemon's decoder)", replacing("\"mode\": \"software\"", "\"mode\": \"loud\"")),
            ("speaker.mqtt.port out of range", replacing("\"board\": { \"kind\": \"simulated\" }", "\"mqtt\": { \"port\": 70000 }, \"board\": { \"kind\": \"simulated\" }")),
            ("device.id with a space", replacing("\"id\": \"speaker-one\"", "\"id\": \"speaker one\"")),
            ("mqtt.prefix with a wildcard", replacing("\"port\": 8883", "\"port\": 8883, \"prefix\": \"a/#\"")),
            ("unknown top-level key", key("wifi2", "{}")),
            ("unknown key in speaker", replacing("\"board\": { \"kind\": \"simulated\" }", "\"board\": { \"kind\": \"simulated\", \"evil\": 1 }")),
            ("mqtt a string", replacing("\"mqtt\": {", "\"mqtt\": \"\(pw)\", \"x\": {")),
            ("device an array", replacing("\"device\": {", "\"device\": [], \"x\": {")),
            ("brokerNetworks any", key("brokerNetworks", "[\"0.0.0.0/0\"]")),
            ("brokerNetworks ::/0", key("brokerNetworks", "[\"::/0\"]")),
            ("brokerNetworks a bad octet", key("brokerNetworks", "[\"10.0.0.256/8\"]")),
            ("brokerNetworks with a space", key("brokerNetworks", "[\"10.0.0.0/8 0.0.0.0/0\"]")),
            ("brokerNetworks with a newline", key("brokerNetworks", "[\"10.0.0.0/8\\nIPAddressAllow=any\"]")),
            ("top level an array", Array("[\"\(pw)\", \"\(pass)\"]".utf8)),
            ("not JSON", Array("wifi.passphrase=\(pass)".utf8)),
            ("empty file", []),
            ("NaN", replacing("\"port\": 8883", "\"port\": NaN")),
            ("nested 200 deep", replacing("\"a settings file for the tests\"", String(repeating: "[", count: 200) + String(repeating: "]", count: 200))),
            ("unterminated string", Array("{\"mqtt\": {\"password\": \"\(pw)".utf8)),
            ("lone surrogate escape", replacing("Home [5G]", "\\ud800")),
        ]
        f.append(("comment key holding a secret, and a bad key", replacing("\"_about\": \"a settings file for the tests\"", "\"_about\": \"\(pass)\", \"bogus\": 1")))
        return f
    }

    @Test func everyHostileFileIsRefusedChangesNothingAndLeaksNoSecret() throws {
        let r = try SettingsRoot()
        let first = try r.apply(SettingsRoot.good)
        try #require(first.code == 0, "\(first.output)")
        let before = r.snapshot()
        let psk = SettingsApplyTests.psk(r) ?? "missing"
        var tried = 0, changed = 0, leaked = 0, accepted = 0
        for (what, bytes) in Self.files {
            tried += 1
            unlink(r.errorPath)
            let run = try r.apply(bytes)
            if run.code != 1 { accepted += 1 }
            #expect(run.code == 1, "\(what): exit \(run.code.map(String.init) ?? "none")\n\(run.output)")
            #expect(run.output.hasPrefix("<3>ambient-speaker.json: "), "\(what): \(run.output)")
            if r.snapshot() != before { changed += 1 }
            #expect(SettingsRoot.differences(before, r.snapshot()) == [], "\(what): the root changed")
            #expect(r.mode(r.errorPath) == 0o600, "\(what): error file mode")
            // The settings file itself is the input and keeps what it holds.
            for secret in [Self.pass, Self.pw, psk] {
                let places = r.files(containing: secret).filter { $0 != "/boot/ambient-speaker.json" }
                let allowed = secret == Self.pw ? ["/root/etc/ambient-speaker/mqtt-password"]
                    : secret == psk ? ["/root/etc/wpa_supplicant/wpa_supplicant-wlan0.conf"] : []
                if places != allowed { leaked += 1 }
                #expect(places == allowed, "\(what): a secret is in \(places)")
            }
        }
        print("hostile settings: \(tried) files tried, \(accepted) accepted, \(changed) changed the root, \(leaked) secret leaks")
        #expect(tried >= 40)
    }
}
