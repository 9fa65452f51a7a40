// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// board/: install.sh (and the packaging scripts) pass shellcheck and installs for real in a Debian
/// bookworm root made with debootstrap (scripts/test-board-install; cached
/// under /var/cache/ambient-speaker-debootstrap after the first run).
@Suite(.serialized) struct BoardKitTests {
    @Test func installScriptsPassShellcheck() throws {
        let root = repositoryRoot()
        let log = "/tmp/shellcheck-\(getpid()).log"
        defer { unlink(log) }
        let scripts = ["board/install.sh", "scripts/test-board-install", "scripts/package", "scripts/root-run", "Tests/Package/run"]
        let code = try Files.shell("shellcheck " + scripts.map { "'\(root)/\($0)'" }.joined(separator: " "), logPath: log, timeout: 120)
        #expect(code == 0, "shellcheck (exit \(code.map(String.init) ?? "timeout")):\n\((try? Files.readText(log)) ?? "")")
    }

    @Test func installScriptWorksInADebootstrappedBookwormRoot() throws {
        let log = "/tmp/board-install-\(getpid()).log"
        defer { unlink(log) }
        let command = "'\(repositoryRoot())/scripts/test-board-install' '\(try SpeakerProcess.binaryPath())'"
        let code = try Files.shell(command, logPath: log, timeout: 1200)
        let output = (try? Files.readText(log)) ?? ""
        #expect(code == 0 && output.contains("board install test: ") && output.contains(" checks passed, 0 failed"),
                "exit \(code.map(String.init) ?? "timeout"):\n\(output.suffix(4000))")
    }

    @Test func pinoutDocumentsEveryDefaultLine() throws {
        let root = repositoryRoot()
        let pinout = try Files.readText(root + "/board/pinout.md")
        let svg = try Files.readText(root + "/board/wiring.svg")
        for line in ["GPIO17", "GPIO27", "GPIO22", "GPIO23", "GPIO24", "GPIO25", "GPIO5", "GPIO6"] {
            #expect(pinout.contains(line) && svg.contains(line), "\(line) missing from pinout.md or wiring.svg")
        }
        #expect(svg.hasPrefix("<svg") || svg.hasPrefix("<?xml"))
        #expect(svg.ranges(of: "<svg").count == 1 && svg.ranges(of: "</svg>").count == 1)
    }
}
