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

/// systemd/ambient-speaker.service: `systemd-analyze verify` is clean and
/// `systemd-analyze security --offline=true` rates it at most 2.0.
@Suite struct SystemdUnitTests {
    var unitPath: String { repositoryRoot() + "/systemd/ambient-speaker.service" }

    @Test func verifyIsClean() throws {
        // verify needs the unit's executables and systemd's own units: a small root with both.
        let root = try Files.makeTemporaryDirectory("/tmp/unit-verify-XXXXXX")
        let log = root + "/verify.log"
        let setup = """
        set -e; mkdir -p '\(root)/usr/lib/systemd' '\(root)/etc/systemd/system' '\(root)/usr/local/bin' '\(root)/bin'
        cp -r /lib/systemd/system '\(root)/usr/lib/systemd/'
        cp '\(try SpeakerProcess.binaryPath())' '\(root)/usr/local/bin/ambient-speaker'
        cp /bin/kill '\(root)/bin/kill'
        cp '\(unitPath)' '\(root)/etc/systemd/system/'
        """
        let setupCode = try Files.shell(setup, logPath: root + "/setup.log", timeout: 60)
        #expect(setupCode == 0, "setup: \((try? Files.readText(root + "/setup.log")) ?? "")")
        let code = try Files.shell("systemd-analyze verify --root='\(root)' /etc/systemd/system/ambient-speaker.service",
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
