// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import Testing
import TestSupport

/// The hostile settings suite, part two: the boot wrapper and the card
/// against the speaker. Whatever is saved on the card, at whatever moment,
/// the speaker ends up running exactly what the card says, and what the
/// card does not say keeps its value.
extension HostileSettingsTests {
    /// A member that is not there (the subscript answers null for a missing key).
    static func absent(_ value: JSONValue?) -> Bool { value == nil || value == .null }

    /// A save in the window after the applier returned (while the wrapper
    /// restarts wpa_supplicant and reloads systemd) is not recorded as
    /// applied: the applier records the hash of the bytes it read or wrote,
    /// so the next run applies the new file.
    @Test func aSaveAfterTheApplierReturnsIsAppliedAtTheNextRun() throws {
        let r = try SettingsRoot()
        let w = try SettingsWrapper(r)
        try r.write(r.settingsPath, Array(SettingsRoot.good.utf8))
        let renamed = Self.replacing("\"hostname\": \"speaker-one\"", "\"hostname\": \"renamed\"")
        let first = try w.run(saveAfter: renamed)
        #expect(first.code == 0, "\(first.output)")
        #expect(try Files.read(r.settingsPath) == renamed, "the save happened")
        #expect(w.recorded != SHA256.hex(renamed) + "\n", "the new file was recorded as applied but never applied")
        let second = try w.run()
        #expect(second.code == 0, "\(second.output)")
        #expect(!second.output.contains("unchanged"), "\(second.output)")
        #expect(r.text("/etc/hostname") == "renamed\n")
        #expect(r.files(containing: Self.pass).isEmpty && r.files(containing: Self.pw) == ["/root/etc/ambient-speaker/mqtt-password"],
                "the new file's secrets are blanked")
        let third = try w.run()
        #expect(third.code == 0 && third.output.contains("unchanged since it was applied"), "\(third.output)")
    }

    /// A directory where the settings file belongs is an invalid file: the
    /// error file says so and the LED blinks (the wrapper used to stop at
    /// its first hash, silently).
    @Test func aDirectoryNamedLikeTheSettingsFileIsAnErrorThatBlinks() throws {
        let r = try SettingsRoot()
        let w = try SettingsWrapper(r)
        #expect(mkdir(r.settingsPath, 0o755) == 0)
        let run = try w.run()
        #expect(run.code == 1, "\(run.output)")
        #expect(r.text("/run/ambient-speaker-image/settings-error")?.contains("ambient-speaker.json") == true, "\(run.output)")
        #expect(w.led == "timer", "\(w.led ?? "no LED")")
    }

    /// A file over the applier's 64 KiB limit is refused without being
    /// hashed first (2 GiB took minutes on a Pi before the limit applied).
    @Test func aFileOverTheLimitIsNeverHashedWhole() throws {
        let r = try SettingsRoot()
        let w = try SettingsWrapper(r)
        let fd = open(r.settingsPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        #expect(fd >= 0 && ftruncate(fd, 2 << 30) == 0)
        close(fd)
        let run = try w.run()
        #expect(run.code == 1 && run.output.contains("larger than 65536 bytes"), "\(run.output)")
        #expect(access(r.directory + "/hashed-large", F_OK) != 0, "the wrapper hashed \((try? Files.readText(r.directory + "/hashed-large")) ?? "") bytes")
        #expect(w.led == "timer")
    }

    /// `{"hostname": "renamed"}` after a full file changes the host name and
    /// nothing else: the broker, its TLS and password, the device and the
    /// DAC's audio device stay what the first file made them.
    @Test func aPartialFileKeepsEveryKeyItLeavesOut() throws {
        let r = try SettingsRoot()
        #expect(try r.apply(SettingsRoot.good).code == 0)
        let config = r.text("/etc/ambient-speaker/config.json")
        let before = r.snapshot()
        let run = try r.apply("{\"hostname\": \"renamed\"}")
        #expect(run.code == 0, "\(run.output)")
        #expect(r.text("/etc/hostname") == "renamed\n")
        #expect(r.text("/etc/ambient-speaker/config.json") == config, "\(r.text("/etc/ambient-speaker/config.json") ?? "")")
        let changed = SettingsRoot.differences(before, r.snapshot()).filter { !$0.hasPrefix(r.root + "/var/lib/ambient-speaker-image") }
        #expect(changed == [r.root + "/etc/hostname", r.root + "/etc/hosts"], "\(changed)")
    }

    /// An `mqtt` without `caCertificate` keeps the CA; a new host keeps the port and TLS.
    @Test func mqttWithoutCaCertificateKeepsTLS() throws {
        let r = try SettingsRoot()
        #expect(try r.apply(SettingsRoot.good).code == 0)
        let run = try r.apply("{\"mqtt\": {\"host\": \"other.lan\"}}")
        #expect(run.code == 0, "\(run.output)")
        let config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(config["mqtt"]?["host"]?.stringValue == "other.lan")
        #expect(config["mqtt"]?["port"]?.numberValue == 8883)
        #expect(config["mqtt"]?["tls"]?["caFile"]?.stringValue == "/etc/ambient-speaker/mqtt-ca.pem")
        #expect(config["mqtt"]?["passwordFile"]?.stringValue == "/etc/ambient-speaker/mqtt-password")
        #expect(config["device"]?["id"]?.stringValue == "speaker-one")
        #expect(!run.output.contains("<4>"), "\(run.output)")
    }

    /// Turning TLS off while a password is saved is refused unless the file
    /// says `mqtt.allowPasswordWithoutTLS: true`; then it is a warning.
    @Test func aSavedPasswordWithoutTLSIsRefusedUnlessAllowed() throws {
        let r = try SettingsRoot()
        #expect(try r.apply(SettingsRoot.good).code == 0)
        let before = r.snapshot()
        let plain = try r.apply("{\"mqtt\": {\"port\": 1883, \"caCertificate\": null}}")
        #expect(plain.code == 1 && plain.output.contains("mqtt.allowPasswordWithoutTLS"), "\(plain.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
        let allowed = try r.apply("{\"mqtt\": {\"port\": 1883, \"caCertificate\": null, \"allowPasswordWithoutTLS\": true}}")
        #expect(allowed.code == 0, "\(allowed.output)")
        #expect(allowed.output.contains("<4>mqtt: the broker password goes to broker.lan:1883 without TLS"), "\(allowed.output)")
        let config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(Self.absent(config["mqtt"]?["tls"]) && Self.absent(config["mqtt"]?["allowPasswordWithoutTLS"]), "\(config.prettyText)")
    }
}
