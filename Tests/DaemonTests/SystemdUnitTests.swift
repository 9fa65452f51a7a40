// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// The repository root, from this file's path (Tests/DaemonTests/…).
func repositoryRoot(_ file: String = #filePath) -> String {
    var parts = file.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}

/// systemd/ambient-speaker.service and its network-stop guard: `systemd-analyze verify` is clean and
/// `systemd-analyze security --offline=true` rates it at most 2.0.
@Suite struct SystemdUnitTests {
    var unitPath: String { repositoryRoot() + "/systemd/ambient-speaker.service" }

    var guardPath: String { repositoryRoot() + "/systemd/ambient-speaker-network-stop.service" }

    /// Sound first: the speaker starts after sound alone, never after the
    /// network (not even network.target, which waits for systemd-networkd's
    /// start) or the clock, and pulls neither in; on the image it also waits
    /// for the settings service alone.
    @Test func startsAfterSoundWithoutWaitingForNetworkOrTime() throws {
        let unit = try Files.readText(unitPath)
        let after = Self.values("After", in: unit)
        #expect(after == ["sound.target"], "After=\(after)")
        for key in ["Wants", "Requires", "Requisite", "BindsTo", "Upholds"] {
            let pulled = Self.values(key, in: unit)
            #expect(!pulled.contains { $0.hasPrefix("network") || $0.hasPrefix("time-") }, "\(key)=\(pulled)")
        }
        let image = try Files.readText(repositoryRoot() + "/board/image/overlay/etc/systemd/system/ambient-speaker.service.d/image.conf")
        #expect(Self.values("After", in: image) == ["ambient-speaker-settings.service"])
        #expect(["Wants", "Requires", "Before"].allSatisfy { Self.values($0, in: image).isEmpty })
    }

    /// The stop before the network's: the speaker pulls in the guard without
    /// ordering; the guard is ordered after network.target (so its stop comes
    /// first at shutdown), stops the speaker then, and has no ordering against
    /// the speaker (whose stop would then wait for the guard's: a deadlock).
    @Test func theNetworkStopGuardOrdersOnlyTheStop() throws {
        let unit = try Files.readText(unitPath)
        #expect(Self.values("Wants", in: unit) == ["ambient-speaker-network-stop.service"])
        #expect(!["After", "Before"].contains { Self.values($0, in: unit).contains("ambient-speaker-network-stop.service") })
        let guardUnit = try Files.readText(guardPath)
        #expect(Self.values("After", in: guardUnit) == ["network.target"])
        #expect(Self.values("Before", in: guardUnit).isEmpty)
        let service = guardUnit.split(separator: "\n").map { String($0.drop(while: { $0 == " " || $0 == "\t" })) }
        #expect(service.contains("ExecStop=-/bin/systemctl stop ambient-speaker.service"), "\(guardUnit)")
        #expect(service.contains("RemainAfterExit=yes") && service.contains("Type=oneshot"))
        #expect(!service.contains { $0.hasPrefix("[Install]") }, "the guard is pulled in by the speaker, never enabled alone")
    }

    /// Every value of `key=` in the [Unit] section, space-separated lists split.
    static func values(_ key: String, in unit: String) -> [String] {
        var section = "", found: [String] = []
        for raw in unit.split(separator: "\n") {
            let line = raw.drop(while: { $0 == " " || $0 == "\t" })
            if line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") { section = String(line); continue }
            guard section == "[Unit]", line.hasPrefix("\(key)=") else { continue }
            found += line.dropFirst(key.count + 1).split(separator: " ").map(String.init)
        }
        return found
    }

    @Test func verifyIsClean() throws {
        try verify(dropIn: nil)
    }

    /// The image's way to a broker outside the private ranges: `brokerNetworks`
    /// in the settings becomes a drop-in that adds to IPAddressAllow= (never
    /// resets it, never touches IPAddressDeny=any); the unit stays clean.
    @Test func verifyIsCleanWithTheBrokerNetworksDropIn() throws {
        let settings = try SettingsRoot()
        let run = try settings.apply(#"{"brokerNetworks": ["100.64.0.0/10", "fd7a:115c:a1e0::/48"]}"#)
        #expect(run.code == 0, "\(run.output)")
        let dropIn = try #require(settings.text("/etc/systemd/system/ambient-speaker.service.d/broker-networks.conf"))
        let directives = dropIn.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix("[") }
        #expect(directives == ["IPAddressAllow=100.64.0.0/10 fd7a:115c:a1e0::/48"], "\(dropIn)")
        try verify(dropIn: dropIn)
    }

    /// `systemd-analyze verify` on the unit (and a drop-in) in a small root; clean means no output.
    func verify(dropIn: String?) throws {
        // verify needs the unit's executables and systemd's own units: a small root with both.
        let root = try Files.makeTemporaryDirectory("/tmp/unit-verify-XXXXXX")
        let log = root + "/verify.log"
        let setup = """
        set -e; mkdir -p '\(root)/usr/lib/systemd' '\(root)/etc/systemd/system/ambient-speaker.service.d' '\(root)/usr/local/bin' '\(root)/bin'
        cp -r /lib/systemd/system '\(root)/usr/lib/systemd/'
        cp '\(try SpeakerProcess.binaryPath())' '\(root)/usr/local/bin/ambient-speaker'
        cp /bin/kill /bin/true /bin/systemctl '\(root)/bin/'
        cp '\(unitPath)' '\(guardPath)' '\(root)/etc/systemd/system/'
        """
        let setupCode = try Files.shell(setup, logPath: root + "/setup.log", timeout: 60)
        #expect(setupCode == 0, "setup: \((try? Files.readText(root + "/setup.log")) ?? "")")
        if let dropIn { try Files.writeText(root + "/etc/systemd/system/ambient-speaker.service.d/broker-networks.conf", dropIn) }
        let code = try Files.shell("systemd-analyze verify --root='\(root)' /etc/systemd/system/ambient-speaker.service"
                                   + " /etc/systemd/system/ambient-speaker-network-stop.service",
                                   logPath: log, timeout: 120)
        let output = (try? Files.readText(log)) ?? ""
        #expect(code == 0 && output.isEmpty, "systemd-analyze verify (exit \(code.map(String.init) ?? "timeout")):\n\(output)")
        _ = try Files.shell("rm -rf '\(root)'", logPath: "/dev/null", timeout: 60)
    }

    @Test func securityExposureIsAtMostTwo() throws {
        let log = "/tmp/unit-security-\(getpid()).log"
        defer { unlink(log) }
        let code = try Files.shell("systemd-analyze security --offline=true --no-pager '\(unitPath)'", logPath: log, timeout: 120)
        let output = (try? Files.readText(log)) ?? ""
        #expect(code == 0, "systemd-analyze security exit \(code.map(String.init) ?? "timeout"):\n\(output)")
        let marker = "Overall exposure level for ambient-speaker.service: "
        // The figure right after the marker ("1.6 OK 🙂", or "1.6 OK :-)" where
        // systemd does not use emoji, as in a trixie chroot).
        let exposure = output.split(separator: "\n").lazy.compactMap { line in line.ranges(of: marker).first.map { line[$0.upperBound...] } }
            .first
            .map { $0.prefix(while: { $0 == "." || $0.isNumber }) }
            .flatMap { Double(String($0)) }
        try #require(exposure != nil, "no exposure figure in:\n\(output)")
        print(#"{"metric":"systemd_security_exposure","value":\#(exposure!),"unit":"exposure"}"#)
        #expect(exposure! <= 2.0, "exposure \(exposure!):\n\(output)")
    }
}
