// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// The built binary's `ambient-speaker watch` against a broker, for
/// end-to-end tests and benchmarks: its JSON lines (stdout) in one file, its
/// log (stderr) in another, in a temporary directory removed at deinit.
public final class WatcherProcess: @unchecked Sendable {
    public let directory: String
    public let process: ChildProcess
    public var eventsPath: String { directory + "/events.jsonl" }
    public var logPath: String { directory + "/watch.log" }
    public var log: String { (try? readText(logPath)) ?? "" }

    /// Starts `watch --broker 127.0.0.1:PORT` with `arguments` added (`--device ID`, `--prefix P`).
    public init(brokerPort: UInt16, arguments: [String] = []) throws {
        directory = try makeTemporaryDirectory(prefix: "speaker-watch")
        process = try ChildProcess(executable: try SpeakerProcess.binaryPath(),
                                   arguments: ["watch", "--broker", "127.0.0.1:\(brokerPort)", "--log-level", "debug"] + arguments,
                                   logPath: directory + "/events.jsonl", errorPath: directory + "/watch.log")
    }

    deinit {
        process.send(SIGKILL)
        _ = process.waitForExit(timeout: 5)
        _ = try? runShell("rm -rf '\(directory)'", logPath: "/dev/null")
    }

    /// The complete lines printed so far.
    public var lines: [String] {
        let text = (try? readText(eventsPath)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// Waits until `check` holds for the lines, re-reading the file whenever
    /// inotify says it was written (no sleeping between reads). One test thread.
    public func waitForLines(timeout: Double, until check: ([String]) -> Bool) -> Bool {
        waitForWrites(to: eventsPath, timeout: timeout) { check(lines) }
    }

    /// Waits until `check` holds for the log.
    public func waitForLog(timeout: Double, until check: (String) -> Bool) -> Bool {
        waitForWrites(to: logPath, timeout: timeout) { check(log) }
    }
}
