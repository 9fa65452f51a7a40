// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerCore

/// Watches a directory for new files (inotify), to time a kill into a write.
final class DirectoryWatch {
    private let fd: Int32

    init(directory: String) throws {
        fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { throw DaemonTestError("inotify_init1") }
        guard inotify_add_watch(fd, directory, UInt32(IN_CREATE)) >= 0 else { throw DaemonTestError("inotify_add_watch(\(directory))") }
    }

    deinit { close(fd) }

    /// Waits up to `timeout` s for a file whose name starts with `prefix` to be created.
    func waitForCreation(prefix: String, timeout: Double) -> Bool {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Monotonic.nanoseconds() < deadline {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) == 1 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            var offset = 0
            while n > 0 && offset + 16 <= n {
                let nameLength = Int(buffer[offset + 12]) | Int(buffer[offset + 13]) << 8 | Int(buffer[offset + 14]) << 16
                let name = String(decoding: buffer[(offset + 16)..<(offset + 16 + nameLength)].prefix(while: { $0 != 0 }), as: UTF8.self)
                if name.hasPrefix(prefix) { return true }
                offset += 16 + nameLength
            }
        }
        return false
    }
}

/// `kill -9` at random moments while the speaker writes its state, many
/// times, always restarting from what the last run left: the state file is
/// always valid, and the next start restores exactly what it holds.
@Suite(.serialized) struct KillNineTests {
    /// Runs: `KILL9_RUNS` (default 24; set it higher for a longer soak).
    var runs: Int { getenv("KILL9_RUNS").flatMap { Int(String(cString: $0)) } ?? 24 }

    @Test func stateFileSurvivesKillNineDuringWrites() throws {
        var random = SystemRandomNumberGenerator()
        let closedPort = try FreePort.find()  // no broker: the speaker plays and saves without one
        let daemon = try Daemon(brokerPort: closedPort, deviceID: "kill9",
                                extraConfig: #""inputs":{"encoder":{"acceleration":false}}"#)
        try #require(mkdir(daemon.stateDirectory, 0o755) == 0)
        let watch = try DirectoryWatch(directory: daemon.stateDirectory)
        var killedInWrite = 0, killedAnywhere = 0, restoredChecked = 0
        var everSaved = false
        var failures: [String] = []
        for run in 0..<runs {
            let before = try? PersistedState.decode(try Files.read(daemon.statePath))
            try daemon.start()
            // Restores exactly what the last run left.
            if let before {
                if daemon.waitForLog("restored \(before.summary)") { restoredChecked += 1 } else {
                    failures.append("run \(run): did not restore \(before.summary):\n\(daemon.log.suffix(2000))")
                }
            }
            // Change sound and level so there is something to write.
            let turn = Int.random(in: 1...4, using: &random) * (Bool.random(using: &random) ? 1 : -1)
            #expect(try daemon.control("turn \(turn > 0 ? "+" : "")\(turn)") == "ok")
            #expect(try daemon.control("press next") == "ok")
            if run % 3 == 2 {
                // A random moment (0–1.5 s after the input), write or not.
                Files.pause(milliseconds: Int.random(in: 0...1500, using: &random))
                killedAnywhere += 1
            } else {
                // Inside a write: the temporary file exists; wait a random 0–3 ms more (write, fsync, rename, fsync dir).
                guard watch.waitForCreation(prefix: ".state.json.tmp-", timeout: 20) else {
                    failures.append("run \(run): no state write seen:\n\(daemon.log.suffix(2000))")
                    daemon.stop()
                    continue
                }
                let spinUntil = Monotonic.nanoseconds() + UInt64.random(in: 0...3_000_000, using: &random)
                while Monotonic.nanoseconds() < spinUntil {}
                killedInWrite += 1
            }
            daemon.process?.send(SIGKILL)
            #expect(daemon.process?.waitForExit(timeout: 10) == 128 + SIGKILL)
            guard let bytes = try? Files.read(daemon.statePath) else {
                // Missing is fine only until the first write has completed (the rename makes it exist).
                if everSaved { failures.append("run \(run): state file missing after a kill") }
                continue
            }
            everSaved = true
            do {
                let state = try PersistedState.decode(bytes)
                let steps = ((state.level ?? -1) / 0.05).rounded()
                if abs(steps * 0.05 - (state.level ?? -1)) > 1e-9 { failures.append("run \(run): odd level \(state.summary)") }
            } catch {
                failures.append("run \(run): INVALID state file after kill -9: \(error) — \(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        print(#"{"metric":"kill9_runs","value":\#(runs),"unit":"runs","in_write":\#(killedInWrite),"anywhere":\#(killedAnywhere),"#
              + #""restores_checked":\#(restoredChecked),"failures":\#(failures.count)}"#)
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.joined(separator: "\n"))")
        #expect(killedInWrite >= runs / 2, "most kills should land inside a write")
        #expect(restoredChecked >= runs / 2, "starts after a completed write restore the file (each one checked above)")
        // A last clean start removes the temporaries the kills left behind.
        try daemon.start()
        #expect(daemon.waitForLog("ready"))
        let leftovers = Files.list(daemon.stateDirectory).filter { $0.hasPrefix(".state.json.tmp-") }
        #expect(leftovers.isEmpty, "stale temporaries: \(leftovers)")
    }
}
