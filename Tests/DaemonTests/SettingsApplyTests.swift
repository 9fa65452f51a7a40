// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import Testing
import TestSupport

/// `ambient-speaker apply-settings` on a scratch root: what a valid file
/// writes, and each problem found in the shell applier it replaced, as a
/// regression test (the rows of the settings review, numbered as there).
@Suite(.serialized) struct SettingsApplyTests {
    static let wpa = "/etc/wpa_supplicant/wpa_supplicant-wlan0.conf"

    /// The `psk=` line of the saved wpa_supplicant config.
    static func psk(_ root: SettingsRoot) -> String? {
        root.text(wpa)?.split(separator: "\n").first { $0.hasPrefix("\tpsk=") }.map { String($0.dropFirst(5)) }
    }

    static func expectedPSK(_ passphrase: String, _ ssid: String) -> String {
        WPAKey.hex(WPAKey.derive(passphrase: Array(passphrase.utf8), ssid: Array(ssid.utf8)))
    }

    @Test func aValidFileWritesEveryOutputWithItsModeAndTheSecretsOnlyInTheirDestinations() throws {
        let r = try SettingsRoot()
        let run = try r.apply(SettingsRoot.good)
        #expect(run.code == 0, "\(run.output)")
        #expect(r.text("/etc/hostname") == "speaker-one\n")
        #expect(r.text("/etc/hosts") == "127.0.0.1\tlocalhost\n127.0.1.1\tspeaker-one\n")
        #expect(r.text("/etc/timezone") == "Europe/Berlin\n")
        #expect(r.text("/root/.ssh/authorized_keys") == SettingsRoot.sshKey + "\n")
        #expect(r.mode(r.root + "/root/.ssh/authorized_keys") == 0o600)
        #expect(r.mode(r.root + "/root/.ssh") == 0o700)
        let psk = Self.expectedPSK(SettingsRoot.passphrase, "Home [5G]")
        #expect(Self.psk(r) == psk)
        #expect(r.text(Self.wpa)?.contains("\tssid=486f6d65205b35475d\n") == true, "\(r.text(Self.wpa) ?? "")")
        #expect(r.mode(r.root + Self.wpa) == 0o600)
        #expect(r.text("/etc/ambient-speaker/mqtt-password") == SettingsRoot.password)
        #expect(r.mode(r.root + "/etc/ambient-speaker/mqtt-password") == 0o600)
        #expect(r.text("/etc/ambient-speaker/mqtt-ca.pem") == SettingsRoot.pem)
        #expect(r.text("/boot/firmware/config.txt")?.hasSuffix("# ambient-speaker dac (set from ambient-speaker.json):\ndtoverlay=hifiberry-dac\n") == true)
        let config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(config["mqtt"]?["passwordFile"]?.stringValue == "/etc/ambient-speaker/mqtt-password")
        #expect(config["mqtt"]?["tls"]?["caFile"]?.stringValue == "/etc/ambient-speaker/mqtt-ca.pem")
        #expect(config["mqtt"]?["port"]?.numberValue == 8883)
        #expect(config["device"]?["id"]?.stringValue == "speaker-one")
        #expect(config["audio"]?["device"]?.stringValue == "null", "speaker wins over the DAC's device")
        #expect(r.mode(r.root + "/etc/ambient-speaker/config.json") == 0o640)
        // The file on the boot partition: both secrets blanked, the rest kept.
        let blanked = try JSONParser().parse(try Files.read(r.settingsPath))
        #expect(blanked["wifi"]?["passphrase"] == .null && blanked["mqtt"]?["password"] == .null)
        #expect(blanked["wifi"]?["ssid"]?.stringValue == "Home [5G]")
        #expect(r.files(containing: SettingsRoot.passphrase).isEmpty)
        #expect(r.files(containing: SettingsRoot.password) == ["/root/etc/ambient-speaker/mqtt-password"])
        #expect(r.files(containing: psk) == ["/root" + Self.wpa])
        #expect(!run.output.contains("warning") && !run.output.contains("<4>"), "TLS: no warning\n\(run.output)")
    }

    /// Row 1: `null` (keep the saved key) and an open network were the same
    /// after `// empty`, and the keep test was a regex on the SSID. Now the
    /// saved PSK is kept only for the same SSID bytes; anything else fails.
    @Test(arguments: ["Home [5G]", "Cafe*", "Back\\\\slash", "a.b$", "^x"])
    func row1KeepingTheSavedKeyNeverOpensTheNetwork(ssid: String) throws {
        let r = try SettingsRoot()
        let file = SettingsRoot.good.replacingOccurrences("Home [5G]", with: ssid)
        #expect(try r.apply(file).code == 0)
        let psk = Self.psk(r)
        #expect(psk?.utf8.count == 64)
        // The second apply of the blanked file keeps the key.
        var blanked = try Files.read(r.settingsPath)
        blanked += Array("\n".utf8)  // a changed file (the hash differs), still blanked
        let again = try r.apply(blanked)
        #expect(again.code == 0, "\(again.output)")
        #expect(Self.psk(r) == psk)
        #expect(r.text(Self.wpa)?.contains("key_mgmt=NONE") == false)
        // A changed SSID with a null passphrase: refused, nothing changed.
        let before = r.snapshot()
        let changed = String(decoding: blanked, as: UTF8.self).replacingOccurrences("\"hostname\": \"speaker-one\"", with: "\"hostname\": \"renamed\"")
            .replacingOccurrences("\"ssid\": \"\(ssid)\"", with: "\"ssid\": \"Other network\"")
        let refused = try r.apply(changed)
        #expect(refused.code == 1)
        #expect(refused.output.contains("wifi.passphrase: null keeps the saved key, but no key is saved"), "\(refused.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
    }

    /// Row 1 (the other half): an open network is only what `wifi.open: true` says.
    @Test func row1AnOpenNetworkIsExplicitAndAnEmptyPassphraseIsRefused() throws {
        let r = try SettingsRoot()
        let empty = SettingsRoot.good.replacingOccurrences("\"passphrase\": \"\(SettingsRoot.passphrase)\"", with: "\"passphrase\": \"\"")
        let refused = try r.apply(empty)
        #expect(refused.code == 1 && refused.output.contains("for an open network set wifi.open to true"), "\(refused.output)")
        #expect(r.text(Self.wpa) == nil)
        let open = SettingsRoot.good.replacingOccurrences("\"passphrase\": \"\(SettingsRoot.passphrase)\"", with: "\"open\": true")
        #expect(try r.apply(open).code == 0)
        #expect(r.text(Self.wpa)?.contains("\tkey_mgmt=NONE\n") == true)
        #expect(Self.psk(r) == nil)
    }

    /// Row 2: a trailing comma made jq print the object and `fail` echo it to
    /// the journal, the console and a 0644 error file.
    @Test func row2AParseErrorShowsWhereNotWhat() throws {
        let r = try SettingsRoot()
        let file = SettingsRoot.good.dropLast() + ",\n}"
        let run = try r.apply(String(file))
        #expect(run.code == 1)
        #expect(run.output.contains("not valid JSON: expected a member name in quotes at byte"), "\(run.output)")
        #expect(!run.output.contains(SettingsRoot.passphrase) && !run.output.contains(SettingsRoot.password))
        #expect(r.mode(r.errorPath) == 0o600)
        let error = try Files.readText(r.errorPath)
        #expect(error.contains("not valid JSON") && !error.contains(SettingsRoot.password) && !error.contains(SettingsRoot.passphrase))
    }

    /// Row 5: an SSID with a newline became its own line in the wpa config.
    /// Row 6: `od` folded a repeated 16-byte block into `*`. The SSID is now
    /// checked for control characters and written only as hex.
    @Test func rows5And6TheSSIDIsHexAndCannotAddALine() throws {
        let r = try SettingsRoot()
        let injected = SettingsRoot.good.replacingOccurrences("Home [5G]", with: "x\\nupdate_config=1")
        let run = try r.apply(injected)
        #expect(run.code == 1 && run.output.contains("wifi.ssid: must not contain control characters"), "\(run.output)")
        let halves = String(repeating: "0123456789abcdef", count: 2)
        #expect(try r.apply(SettingsRoot.good.replacingOccurrences("Home [5G]", with: halves)).code == 0)
        let hex = WPAKey.hex(Array(halves.utf8))
        #expect(r.text(Self.wpa)?.contains("\tssid=\(hex)\n") == true && hex.utf8.count == 64, "\(r.text(Self.wpa) ?? "")")
        // A quote and a brace in the SSID: bytes like any other in hex.
        #expect(try r.apply(SettingsRoot.good.replacingOccurrences("Home [5G]", with: "x\\\"}=")).code == 0)
        #expect(r.text(Self.wpa)?.split(separator: "\n").count == 8)
    }

    /// Row 7: a TAB in the passphrase passed the checks, then the applier
    /// aborted after host name, time zone and SSH keys were changed.
    @Test func row7ATabInThePassphraseChangesNothing() throws {
        let r = try SettingsRoot()
        let before = r.snapshot()
        let run = try r.apply(SettingsRoot.good.replacingOccurrences(SettingsRoot.passphrase, with: "tab\\there-in-it"))
        #expect(run.code == 1 && run.output.contains("wifi.passphrase: only printable ASCII"), "\(run.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
        #expect(r.mode(r.errorPath) == 0o600)
    }

    /// Row 8: the passphrase was on `wpa_passphrase`'s command line. The PSK
    /// is derived in process: a `wpa_passphrase` first on PATH is never run.
    @Test func row8NoProgramSeesThePassphrase() throws {
        let r = try SettingsRoot()
        let bin = r.directory + "/bin"
        try SettingsRoot.makeDirectories(bin)
        for tool in ["wpa_passphrase", "jq", "od", "sh", "bash"] {
            try Files.writeText(bin + "/" + tool, "#!/bin/sh\necho \"$0 $*\" >>\(r.directory)/spawned\n")
            chmod(bin + "/" + tool, 0o755)
        }
        let run = try r.apply(SettingsRoot.good, environment: ["PATH=\(bin)"])
        #expect(run.code == 0, "\(run.output)")
        #expect(access(r.directory + "/spawned", F_OK) != 0, "no program was started")
        #expect(Self.psk(r) == Self.expectedPSK(SettingsRoot.passphrase, "Home [5G]"))
    }

    /// Row 9: `${#ssid}` counted characters (20 × é = 40 bytes passed) and
    /// invalid UTF-8 was replaced silently.
    @Test func row9TheSSIDIsCountedInBytesAndMustBeUTF8() throws {
        let r = try SettingsRoot()
        let before = r.snapshot()
        let wide = try r.apply(SettingsRoot.good.replacingOccurrences("Home [5G]", with: String(repeating: "é", count: 20)))
        #expect(wide.code == 1 && wide.output.contains("wifi.ssid: at most 32 bytes (UTF-8), got 40"), "\(wide.output)")
        let bytes = Array("{\"wifi\": {\"country\": \"DE\", \"ssid\": \"".utf8) + [0xC3, 0x28]
            + Array("\", \"passphrase\": \"\(SettingsRoot.passphrase)\"}}".utf8)
        let invalid = try r.apply(bytes)
        #expect(invalid.code == 1 && invalid.output.contains("invalid UTF-8"), "\(invalid.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
        #expect(try r.apply(SettingsRoot.good.replacingOccurrences("Home [5G]", with: String(repeating: "é", count: 16))).code == 0)
    }

    /// Row 10: jq kept the last of two `mqtt.password` keys.
    @Test func row10ADuplicateKeyIsRefused() throws {
        let r = try SettingsRoot()
        let file = SettingsRoot.good.replacingOccurrences("\"password\": \"\(SettingsRoot.password)\"",
                                                           with: "\"password\": \"\(SettingsRoot.password)\", \"password\": \"second\"")
        let run = try r.apply(file)
        #expect(run.code == 1 && run.output.contains("duplicate key \"password\""), "\(run.output)")
        #expect(!run.output.contains(SettingsRoot.password))
    }

    /// Row 11: no size limit (20 MB took 8.9 s and 145 MB). Now refused unread past 64 KiB.
    @Test func row11AFileOverTheLimitIsRefused() throws {
        let r = try SettingsRoot()
        let before = r.snapshot()
        let big = "{\"_about\": \"" + String(repeating: "x", count: 20 * 1024 * 1024) + "\"}"
        let run = try r.apply(big)
        #expect(run.code == 1 && run.output.contains("larger than 65536 bytes"), "\(run.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
    }

    /// Row 4 (the applier's half): a password without TLS is refused, and a
    /// warning in the journal when the file allows it explicitly.
    @Test func row4APasswordWithoutTLSIsRefusedOrAWarning() throws {
        let r = try SettingsRoot()
        let plain = SettingsRoot.good.replacingOccurrences("\"port\": 8883", with: "\"port\": 1883")
            .replacingOccurrences("\"caCertificate\": \"\(SettingsRoot.pem.replacingNewlines)\"", with: "\"caCertificate\": null")
        let refused = try r.apply(plain)
        #expect(refused.code == 1 && refused.output.contains("mqtt.caCertificate: TLS is off but a broker password is given"), "\(refused.output)")
        let run = try r.apply(plain.replacingOccurrences("\"port\": 1883", with: "\"port\": 1883, \"allowPasswordWithoutTLS\": true"))
        #expect(run.code == 0, "\(run.output)")
        #expect(run.output.contains("<4>mqtt: the broker password goes to broker.lan:1883 without TLS"), "\(run.output)")
    }

    /// `brokerNetworks`: a drop-in widening IPAddressAllow= by exactly the
    /// prefixes named; [] removes it; "any" is refused.
    @Test func brokerNetworksWriteADropInAndNeverAllowAny() throws {
        let r = try SettingsRoot()
        let dropIn = "/etc/systemd/system/ambient-speaker.service.d/broker-networks.conf"
        let with = SettingsRoot.good.replacingOccurrences("\"dac\"", with: "\"brokerNetworks\": [\"100.64.0.0/10\", \"2001:db8::/32\"], \"dac\"")
        #expect(try r.apply(with).code == 0)
        #expect(r.text(dropIn)?.hasSuffix("[Service]\nIPAddressAllow=100.64.0.0/10 2001:db8::/32\n") == true, "\(r.text(dropIn) ?? "")")
        let before = r.snapshot()
        for bad in ["0.0.0.0/0", "::/0", "100.64.0.0/33", "any", "10.0.0.01"] {
            let run = try r.apply(SettingsRoot.good.replacingOccurrences("\"dac\"", with: "\"brokerNetworks\": [\"\(bad)\"], \"dac\""))
            #expect(run.code == 1 && run.output.contains("brokerNetworks[0]"), "\(bad): \(run.output)")
            #expect(SettingsRoot.differences(before, r.snapshot()) == [], "\(bad)")
        }
        #expect(try r.apply(SettingsRoot.good.replacingOccurrences("\"dac\"", with: "\"brokerNetworks\": [], \"dac\"")).code == 0)
        #expect(r.text(dropIn) == nil)
    }

    /// The files the repository ships or the image boot test uses are valid.
    @Test(arguments: ["board/image/ambient-speaker.json", "board/image/ambient-speaker.example.json", "Tests/Image/settings.json"])
    func theShippedSettingsFilesApply(path: String) throws {
        let r = try SettingsRoot()
        let run = try r.apply(try Self.imageTestSettings(path))
        #expect(run.code == 0, "\(path): \(run.output)")
    }

    /// A shipped settings file; the image boot test's with the CA that
    /// Tests/Image/run puts into it for each run (its broker password needs TLS).
    static func imageTestSettings(_ path: String) throws -> String {
        let text = try Files.readText(SettingsRoot.repository + "/" + path)
        guard path == "Tests/Image/settings.json" else { return text }
        return text.replacingOccurrences("\"caCertificate\": null", with: "\"caCertificate\": \"\(SettingsRoot.pem.replacingNewlines)\"")
    }

    /// What the image's boot test (Tests/Image/guest/usr/libexec/image-test/check)
    /// expects of the applier, on a scratch root: the first boot's files, the
    /// blanked file kept at the next apply, a bad volume.mode refused naming the
    /// key with config.json untouched, then a new time zone applied.
    @Test func theImageBootTestsExpectations() throws {
        let r = try SettingsRoot()
        let first = try r.apply(try Self.imageTestSettings("Tests/Image/settings.json"))
        #expect(first.code == 0, "\(first.output)")
        let wpa = r.text(Self.wpa) ?? ""
        #expect(wpa.split(separator: "\n").contains("country=DE"))
        #expect(wpa.split(separator: "\n").contains { $0.hasPrefix("\tpsk=") && $0.utf8.count == 69 })
        let config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(config["device"]?["id"]?.stringValue == "ci-speaker" && config["board"]?["kind"]?.stringValue == "simulated")
        #expect(config["mqtt"]?["passwordFile"]?.stringValue == "/etc/ambient-speaker/mqtt-password")
        #expect(r.text("/boot/firmware/config.txt")?.split(separator: "\n").contains("dtoverlay=hifiberry-dac") == true)
        let blanked = try JSONParser().parse(try Files.read(r.settingsPath))
        #expect(blanked["wifi"]?["passphrase"] == .null && blanked["mqtt"]?["password"] == .null)
        let configBefore = r.text("/etc/ambient-speaker/config.json")
        let loud = String(decoding: try Files.read(r.settingsPath), as: UTF8.self)
            .replacingOccurrences("\"mode\": \"software\"", with: "\"mode\": \"loud\"")
        let refused = try r.apply(loud)
        #expect(refused.code == 1 && refused.output.hasPrefix("<3>") && refused.output.contains("volume.mode"), "\(refused.output)")
        #expect(r.text("/etc/ambient-speaker/config.json") == configBefore)
        let paris = loud.replacingOccurrences("\"mode\": \"loud\"", with: "\"mode\": \"software\"")
            .replacingOccurrences("Europe/Berlin", with: "Europe/Paris")
        let applied = try r.apply(paris)
        #expect(applied.code == 0, "\(applied.output)")
        #expect(r.text("/etc/timezone") == "Europe/Paris\n")
        #expect(r.text("/etc/ambient-speaker/config.json") == configBefore, "the password and PSK kept")
        #expect(r.text(Self.wpa) == wpa)
    }

    /// `dac` rewrites the line after the image's marker in both firmware files
    /// (never a second marker) and sets the speaker's ALSA device.
    @Test func theDACLineIsReplacedNotAppended() throws {
        let r = try SettingsRoot()
        let marker = "# ambient-speaker dac (set from ambient-speaker.json):"
        let none = SettingsRoot.good.replacingOccurrences("\"dac\": \"hifiberry-dac\"", with: "\"dac\": \"none\"")
            .replacingOccurrences(", \"audio\": { \"device\": \"null\" }", with: "")
        #expect(try r.apply(none).code == 0)
        for file in ["/boot/firmware/config.txt", "/etc/default/raspi-firmware-custom"] {
            #expect(r.text(file)?.hasSuffix("\(marker)\n# dtoverlay=none\n") == true, "\(file): \(r.text(file) ?? "")")
        }
        let config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(config["audio"]?["device"]?.stringValue == "default")
        #expect(try r.apply(SettingsRoot.good).code == 0)
        let txt = r.text("/boot/firmware/config.txt") ?? ""
        #expect(txt == "[all]\narm_64bit=1\n\(marker)\ndtoverlay=hifiberry-dac\n", "\(txt)")
        // The same file again: every file the same bytes.
        let before = r.snapshot()
        var again = try Files.read(r.settingsPath)
        again.append(0x0A)
        #expect(try r.apply(again).code == 0)
        #expect(SettingsRoot.differences(before, r.snapshot()) == [r.root + "/var/lib/ambient-speaker-image/applied.sha256"], "only the new file's hash")
    }

    /// A settings path that is a symbolic link or a FIFO is refused at once
    /// (never followed, never blocking), and nothing changes.
    @Test func aLinkOrAFIFOAsTheSettingsFileIsRefused() throws {
        let r = try SettingsRoot()
        let before = r.snapshot()
        let arguments = ["apply-settings", "--settings", r.settingsPath, "--root", r.root, "--error-file", r.errorPath]
        #expect(symlink("/etc/shadow", r.settingsPath) == 0)
        let link = try ChildProcess(executable: try SpeakerProcess.binaryPath(), arguments: arguments, logPath: r.outputPath)
        #expect(link.waitForExit(timeout: 30) == 1)
        #expect(((try? Files.readText(r.outputPath)) ?? "").contains("cannot read"), "\((try? Files.readText(r.outputPath)) ?? "")")
        #expect(unlink(r.settingsPath) == 0 && mkfifo(r.settingsPath, 0o600) == 0)
        let fifo = try ChildProcess(executable: try SpeakerProcess.binaryPath(), arguments: arguments, logPath: r.outputPath)
        #expect(fifo.waitForExit(timeout: 30) == 1, "a FIFO without a writer must not block")
        #expect(((try? Files.readText(r.outputPath)) ?? "").contains("a FIFO, not a regular file"))
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
    }

    /// A power cut between staging and renaming leaves `.NAME.apply-*` beside
    /// a file; the next apply removes them beside every file it manages, even
    /// one it does not change this time, and nothing else. Every file an
    /// apply writes is one of those it manages.
    @Test func theNextApplyRemovesWhatAnInterruptedOneStagedAndOnlyThat() throws {
        let r = try SettingsRoot()
        let before = r.snapshot()
        #expect(try r.apply(SettingsRoot.good).code == 0)
        let managed = Set(SettingsPaths.managed.map { r.root + $0 })
        let written = SettingsRoot.differences(before, r.snapshot()).filter { path in
            var st = stat()
            return lstat(path, &st) == 0 && st.st_mode & S_IFMT != S_IFDIR
        }
        #expect(written.count >= 8, "\(written)")
        #expect(written.allSatisfy(managed.contains), "written outside SettingsPaths.managed: \(written.filter { !managed.contains($0) })")
        // What a cut in the middle of the next apply would have left (the
        // hostname and the password are not changed by applying the same file).
        let staged = ["/etc/.hostname.apply-4242-a1", "/etc/ambient-speaker/.mqtt-password.apply-4242-b2",
                      "/boot/firmware/.config.txt.apply-17-c3", "/etc/ambient-speaker/.config.json.tmp-9"]
        let foreign = ["/etc/.passwd.apply-1-d4", "/etc/ambient-speaker/notes.apply-1", "/etc/.hostname-old"]
        for path in staged + foreign { try Files.writeText(r.root + path, "half-written\n") }
        let run = try r.apply(try Files.read(r.settingsPath))
        #expect(run.code == 0, "\(run.output)")
        for path in staged { #expect(r.text(path) == nil, "\(path) still there") }
        for path in foreign { #expect(r.text(path) == "half-written\n", "\(path) is not the applier's") }
        #expect(run.output.contains("removed \(r.root)/etc/.hostname.apply-4242-a1, left by an interrupted apply"), "\(run.output)")
        #expect(r.text("/etc/hostname") == "speaker-one\n")
    }

    /// Wi-Fi off (empty SSID) removes the config; a 64-hex passphrase is the PSK itself.
    @Test func wifiOffAndAHexPSK() throws {
        let r = try SettingsRoot()
        let hex = String(repeating: "ab", count: 32)
        #expect(try r.apply(SettingsRoot.good.replacingOccurrences(SettingsRoot.passphrase, with: hex)).code == 0)
        #expect(Self.psk(r) == hex)
        #expect(try r.apply(SettingsRoot.good.replacingOccurrences("\"ssid\": \"Home [5G]\"", with: "\"ssid\": \"\"")).code == 0)
        #expect(r.text(Self.wpa) == nil)
    }
}

extension String {
    /// Every occurrence of `target` replaced (no Foundation).
    func replacingOccurrences(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var out = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            out += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return out + rest
    }
}
