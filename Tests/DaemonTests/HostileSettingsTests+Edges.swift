// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerHost
import SpeakerProtocol
import Testing
import TestSupport

/// The hostile settings suite, part three: single inputs that each got
/// through, or broke something, in an earlier applier. Each test names the
/// input; each runs on a root where the good file was applied first.
extension HostileSettingsTests {
    static func appliedRoot() throws -> SettingsRoot {
        let r = try SettingsRoot()
        let first = try r.apply(SettingsRoot.good)
        try #require(first.code == 0, "\(first.output)")
        return r
    }

    /// Mounts a tmpfs of `size` bytes on `path` (needs CAP_SYS_ADMIN); false when it cannot.
    static func mountTmpfs(_ path: String, size: Int) -> Bool {
        mount("tmpfs", path, "tmpfs", 0, "size=\(size),mode=0755") == 0
    }

    /// Files under zoneinfo that are not zones: `localtime` (a link back to
    /// /etc/localtime: a loop), `posixrules`, `leapseconds`, the `right/`
    /// and `posix/` trees. Only zone names are accepted.
    @Test(arguments: ["localtime", "posixrules", "leapseconds", "right/Europe/Berlin", "posix/Europe/Berlin", "zone.tab"])
    func aTimezoneThatIsNotAZoneNameIsRefused(zone: String) throws {
        let r = try Self.appliedRoot()
        let zoneinfo = r.root + "/usr/share/zoneinfo"
        for d in ["/right/Europe", "/posix/Europe"] { try SettingsRoot.makeDirectories(zoneinfo + d) }
        for name in ["localtime", "posixrules", "right/Europe/Berlin", "posix/Europe/Berlin"] {
            try Files.writeText(zoneinfo + "/" + name, "TZif2 (test zone)\n")
        }
        try Files.writeText(zoneinfo + "/leapseconds", "Leap 1972 Jun 30 23:59:60 + S\n")
        try Files.writeText(zoneinfo + "/zone.tab", "DE\t+5230+01322\tEurope/Berlin\n")
        let before = r.snapshot()
        let run = try r.apply("{\"timezone\": \"\(zone)\"}")
        #expect(run.code == 1 && run.output.contains("timezone"), "\(zone): \(run.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [], "\(zone)")
    }

    /// A key name or a broker host holding a newline and `<0>`, or an escape
    /// sequence, reaches the journal, the console and the error file escaped:
    /// no forged line, no control character.
    @Test(arguments: ["{\"x\\n<0>forged emergency\\u001b[2J\": 1}",
                      "{\"mqtt\": {\"port\": 1883, \"caCertificate\": null, \"host\": \"evil\\n<0>forged\\u001b]0;title\\u0007\"}}"])
    func textFromTheFileIsEscapedInEveryLogLine(file: String) throws {
        let r = try Self.appliedRoot()
        unlink(r.errorPath)
        let run = try r.apply(file)
        let error = (try? Files.readText(r.errorPath)) ?? ""
        for (place, text) in [("output", run.output), ("error file", error)] {
            let lines = text.split(separator: "\n")
            #expect(!lines.contains { $0.hasPrefix("<0>") }, "\(place): a forged line\n\(text)")
            #expect(!text.utf8.contains { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }, "\(place): a control character\n\(text)")
        }
        #expect(run.output.contains("\\u000a<0>forged"), "\(run.output)")
    }

    /// `"wifi": {"passphrase": …}` without `ssid` used to mean Wi-Fi off and
    /// deleted the saved network; it is refused, and the network kept.
    @Test func aWifiWithoutSSIDIsRefused() throws {
        let r = try Self.appliedRoot()
        let before = r.snapshot()
        let run = try r.apply("{\"wifi\": {\"country\": \"DE\", \"passphrase\": \"a-new-passphrase\"}}")
        #expect(run.code == 1 && run.output.contains("wifi.ssid: required"), "\(run.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
    }

    /// `"password": ""` removes the saved password; a later null does not bring it back.
    @Test func anEmptyPasswordRemovesTheSavedOne() throws {
        let r = try Self.appliedRoot()
        let none = try r.apply("{\"mqtt\": {\"password\": \"\"}}")
        #expect(none.code == 0, "\(none.output)")
        #expect(r.text("/etc/ambient-speaker/mqtt-password") == nil)
        var config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(Self.absent(config["mqtt"]?["passwordFile"]))
        let keep = try r.apply("{\"mqtt\": {\"password\": null}}")
        #expect(keep.code == 0, "\(keep.output)")
        config = try JSONParser().parse(Array((r.text("/etc/ambient-speaker/config.json") ?? "").utf8))
        #expect(Self.absent(config["mqtt"]?["passwordFile"]), "the old password came back")
        #expect(r.files(containing: Self.pw).isEmpty)
    }

    /// A config.txt with CRLF line ends (edited on Windows): the marker is
    /// found, its line replaced, no second marker, no old overlay left active.
    @Test func aCRLFConfigTxtKeepsOneMarker() throws {
        let r = try Self.appliedRoot()
        let marker = "# ambient-speaker dac (set from ambient-speaker.json):"
        try Files.writeText(r.root + "/boot/firmware/config.txt", "[all]\r\narm_64bit=1\r\n\(marker)\r\ndtoverlay=hifiberry-dac\r\n")
        let run = try r.apply("{\"dac\": \"none\", \"speaker\": {\"audio\": {\"device\": \"null\"}}}")
        #expect(run.code == 0, "\(run.output)")
        let text = r.text("/boot/firmware/config.txt") ?? ""
        #expect(text.components(marker).count == 2, "\(text.debugDescription)")
        #expect(!text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).contains { $0.hasPrefix("dtoverlay=hifiberry-dac") }, "\(text.debugDescription)")
        #expect(text == "[all]\r\narm_64bit=1\r\n\(marker)\r\n# dtoverlay=none\r\n", "\(text.debugDescription)")
    }

    /// Prefixes that together cover every address are refused like /0.
    @Test(arguments: [["0.0.0.0/1", "128.0.0.0/1"], ["::/1", "8000::/1"], ["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1"]])
    func brokerNetworksThatCoverEverythingAreRefused(networks: [String]) throws {
        let r = try Self.appliedRoot()
        let before = r.snapshot()
        let list = networks.map { "\"\($0)\"" }.joined(separator: ", ")
        let run = try r.apply("{\"brokerNetworks\": [\(list)]}")
        #expect(run.code == 1 && run.output.contains("brokerNetworks"), "\(networks): \(run.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [])
    }

    /// The wpa config holds only the derived PSK (WPA2 personal), so the
    /// messages say WPA2, never WPA3.
    @Test func theMessagesSayWPA2() throws {
        let r = try Self.appliedRoot()
        let run = try r.apply("{\"wifi\": {\"country\": \"DE\", \"ssid\": \"x\", \"passphrase\": \"short\"}}")
        #expect(run.code == 1 && run.output.contains("WPA2 personal") && !run.output.contains("WPA3"), "\(run.output)")
        let example = try Files.readText(SettingsRoot.repository + "/board/image/ambient-speaker.example.json")
        #expect(!example.contains("WPA3") || example.contains("WPA3-only networks are not supported"))
    }

    /// A save while the applier runs (after its read, before its blanking)
    /// is not overwritten by the blanked first file: the edit stays, is not
    /// recorded as applied, and the next run applies it.
    @Test func aSaveWhileTheApplierRunsIsKeptAndAppliedNext() throws {
        let r = try SettingsRoot()
        try r.write(r.settingsPath, Array(SettingsRoot.good.utf8))
        let edited = Self.replacing("\"hostname\": \"speaker-one\"", "\"hostname\": \"edited\"")
        let applier = SettingsApplier(settingsPath: r.settingsPath, root: r.root, serviceUser: nil)
        let plan = try applier.apply(beforeBlanking: { try? r.write(r.settingsPath, edited) })
        #expect(try Files.read(r.settingsPath) == edited, "the edit was lost")
        #expect(plan.warnings.contains { $0.contains("saved again while it was applied") }, "\(plan.warnings)")
        #expect(r.text("/var/lib/ambient-speaker-image/applied.sha256") != SHA256.hex(edited) + "\n")
        _ = try applier.apply()
        #expect(r.text("/etc/hostname") == "edited\n")
        #expect(r.files(containing: Self.pass).isEmpty, "the edit's secrets are blanked")
    }

    /// A directory where a file the apply writes belongs (`/etc/timezone`):
    /// refused before any file is renamed, and no staged copy is left.
    @Test func aDirectoryAtADestinationChangesNothing() throws {
        let r = try Self.appliedRoot()
        #expect(unlink(r.root + "/etc/timezone") == 0 && mkdir(r.root + "/etc/timezone", 0o755) == 0)
        let before = r.snapshot()
        let run = try r.apply(Self.replacing("\"hostname\": \"speaker-one\"", "\"hostname\": \"renamed\""))
        #expect(run.code == 1 && run.output.contains("/etc/timezone"), "\(run.output)")
        #expect(SettingsRoot.differences(before, r.snapshot()) == [], "a partial apply")
        #expect(r.snapshot().keys.filter { $0.contains(".apply-") } == [], "staged copies left")
    }

    /// What kill -9 between staging and renaming leaves (staged copies, one
    /// of them the wpa config with its PSK) is removed at the next start,
    /// even when that start's file is invalid.
    @Test func stagedCopiesAreRemovedAtTheNextStartWhateverTheFile() throws {
        let r = try Self.appliedRoot()
        let staged = r.root + "/etc/wpa_supplicant/.wpa_supplicant-wlan0.conf.apply-999-ab"
        try Files.writeText(staged, "network={\n\tpsk=0123\n}\n")
        let run = try r.apply("{\"hostname\": \"-invalid\"}")
        #expect(run.code == 1, "\(run.output)")
        #expect(r.text("/etc/wpa_supplicant/.wpa_supplicant-wlan0.conf.apply-999-ab") == nil, "\(run.output)")
        #expect(run.output.contains("left by an interrupted apply"), "\(run.output)")
    }

    /// A full boot partition: blanking never leaves the file invalid (it is
    /// either blanked or untouched). The settings file is on a one-page
    /// tmpfs, its blanked pretty text larger than the page.
    @Test func aFullBootPartitionNeverLeavesInvalidJSON() throws {
        let r = try Self.appliedRoot()
        let boot = r.directory + "/boot"
        // Not a skip: a run that cannot make the full partition has not tested it.
        try #require(Self.mountTmpfs(boot, size: 4096), "cannot mount a one-page tmpfs at \(boot) (the suite runs as root)")
        defer { _ = umount2(boot, Int32(MNT_DETACH)) }
        // Compact, with both secrets, padded to just under one page.
        let compact = "{\"hostname\":\"speaker-two\",\"wifi\":{\"country\":\"DE\",\"ssid\":\"Home [5G]\",\"passphrase\":\"\(Self.pass)\"},"
            + "\"mqtt\":{\"password\":\"\(Self.pw)\"},\"speaker\":{\"session\":{\"idleTimeoutSeconds\":3600}},\"_pad\":["
        var file = compact
        while file.utf8.count < 4000 { file += "1," }
        file += "1]}"
        let run = try r.apply(file)
        let left = try Files.read(r.settingsPath)
        #expect((try? JSONParser().parse(left)) != nil, "invalid JSON left: \(left.count) bytes\n\(run.output)")
        #expect(run.code == 0 || left == Array(file.utf8), "\(run.output)")
    }
}

extension String {
    /// The pieces between occurrences of `separator` (no Foundation).
    func components(_ separator: String) -> [Substring] {
        var out: [Substring] = []
        var rest = self[...]
        while let range = rest.firstRange(of: separator) {
            out.append(rest[..<range.lowerBound])
            rest = rest[range.upperBound...]
        }
        return out + [rest]
    }
}
