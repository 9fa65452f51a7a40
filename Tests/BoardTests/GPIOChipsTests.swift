// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerCore
import SpeakerSystem
import Board

/// The libgpiod adapter against the real library this build links (v1 or
/// v2). Real gpio-sim chips exist only in the HIL VM (Tests/HIL); here the
/// lookup and error paths run on directories without chips.
@Suite struct GPIOChipsTests {
    /// `EXPECT_LIBGPIOD_API=1|2` (set by scripts/test for each build) pins the
    /// API the build must have picked, so a v2 build that silently used the
    /// system's v1 header fails.
    @Test func buildUsesTheExpectedAPI() {
        let description = GPIOChips.libraryDescription
        #expect(description.hasPrefix("libgpiod "))
        if let expected = ProcessInfoLite.environment("EXPECT_LIBGPIOD_API") {
            #expect(description.hasSuffix("(v\(expected) API)"), "\(description)")
            #expect(GPIOChips.hasKernelDebounce == (expected == "2"))
        }
    }

    private func temporaryDirectory() -> String {
        var template = Array("/tmp/gpio-test.XXXXXX".utf8CString)
        let path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return path
    }

    @Test func chipPathsAreNumericallyOrdered() {
        let dir = temporaryDirectory()
        defer { _ = rmdirAll(dir) }
        for name in ["gpiochip10", "gpiochip2", "gpiochipX", "tty0", "gpiochip0"] {
            let fd = open("\(dir)/\(name)", O_CREAT | O_WRONLY, 0o600)
            close(fd)
        }
        #expect(GPIOChips.chipPaths(directory: dir) == ["\(dir)/gpiochip0", "\(dir)/gpiochip2", "\(dir)/gpiochip10"])
    }

    @Test func unknownLineNamesTheLineAndIsAConfigError() throws {
        let dir = temporaryDirectory()
        defer { _ = rmdirAll(dir) }
        #expect(throws: GPIOError.unknownLine(name: "GPIO17", chips: [])) {
            try GPIOChips.locate(["GPIO17"], directory: dir)
        }
        let error = GPIOError.unknownLine(name: "GPIO17", chips: ["gpiochip0 [pinctrl-bcm2711]"])
        #expect(error.exitCode == 1)
        #expect(error.description.contains("\"GPIO17\" not found"))
        #expect(error.description.contains("gpiochip0 [pinctrl-bcm2711]"))
    }

    @Test func aFileThatIsNoChipIsReportedNotSkipped() throws {
        let dir = temporaryDirectory()
        defer { _ = rmdirAll(dir) }
        let fd = open("\(dir)/gpiochip0", O_CREAT | O_WRONLY, 0o600)
        close(fd)
        let results = GPIOChips.all(directory: dir)
        #expect(results.count == 1)
        guard case .failure(let error) = results.first else { Issue.record("a regular file opened as a chip"); return }
        #expect(error.exitCode == 2)
        #expect(error.description.contains("\(dir)/gpiochip0"))
    }

    @Test func messagesNameConsumerAndGroup() {
        let busy = GPIOError.request(line: "GPIO17", location: "gpiochip1 line 17", path: "/dev/null", errno: EBUSY, consumer: "gpiomon")
        #expect(busy.description == "GPIO line GPIO17 (gpiochip1 line 17) is already in use by \"gpiomon\"; stop it or choose another line")
        #expect(busy.exitCode == 2)
        let denied = GPIOError.opening(path: "/dev/null", errno: EACCES)
        #expect(denied.description.hasPrefix("no permission to open /dev/null: it belongs to group \"root\""))
        #expect(denied.description.contains("usermod -aG root"))
        let gone = GPIOError.chipGone(line: "GPIO23", location: "gpiochip0 line 23", errno: ENODEV)
        #expect(gone.description.contains("is gone"))
        #expect(gone.exitCode == 2)
    }

    @Test func theBoardRefusesToStartWithoutItsLines() throws {
        let dir = temporaryDirectory()
        defer { _ = rmdirAll(dir) }
        let loop = try EventLoop()
        var config = SpeakerConfig.defaults(hostname: "test")
        config.board.kind = .gpio
        let logger = Logger(component: "gpio", threshold: .debug, backend: MemoryLogBackend())
        #expect(throws: GPIOError.unknownLine(name: "GPIO17", chips: [])) {
            _ = try GPIOBoard(config: config, loop: loop, logger: logger, chipDirectory: dir, onEdge: { _ in }, onFailure: { _ in })
        }
    }
}

/// Minimal environment access without Foundation.
enum ProcessInfoLite {
    static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

/// Removes a flat test directory.
func rmdirAll(_ dir: String) -> Int32 {
    for path in GPIOChips.chipPaths(directory: dir) { unlink(path) }
    for name in ["gpiochipX", "tty0"] { unlink("\(dir)/\(name)") }
    return rmdir(dir)
}
