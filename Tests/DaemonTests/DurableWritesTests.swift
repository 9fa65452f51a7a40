// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Every file the speaker keeps across a power cut — the state, the revision
/// reservation (and the previous one beside it), the epoch, the command
/// journal, the files the
/// image's settings write — is written as temporary file, fsync of it,
/// rename over the file, fsync of the directory: shown on the real binary's
/// system calls, traced with strace. Where strace cannot trace (ptrace is
/// not there, e.g. under qemu-user) the tests are skipped and say so.
@Suite(.enabled(if: Strace.works, "strace cannot trace a process here (no strace, or no ptrace, e.g. under qemu-user)"))
struct DurableWritesTests {
    @Test func stateAndRevisionWritesAreSyncedRenamedAndTheirDirectorySynced() throws {
        let broker = try TestBroker()
        let daemon = try Daemon(brokerPort: broker.port, deviceID: "durable")
        let trace = daemon.directory + "/strace.log"
        let process = try ChildProcess(executable: try Strace.path(),
                                       arguments: Strace.options(output: trace) + [try SpeakerProcess.binaryPath(), "run",
                                                                                  "--config", daemon.configPath, "--log-level", "debug"],
                                       logPath: daemon.logPath)
        defer { process.send(SIGKILL); _ = process.waitForExit(timeout: 10) }
        #expect(daemon.waitForLog("revisions reserved through", timeout: 60), "\(daemon.log.suffix(2000))")
        #expect(try daemon.control("press playPause", timeout: 60).hasPrefix("ok"))
        #expect(daemon.waitForLog("saved ", timeout: 30), "the state is saved after a change:\n\(daemon.log.suffix(2000))")
        // A pause over MQTT is held while its fade runs: the command journal is written.
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/durable/command/result")
        _ = try peer.publish(topic: "ambient-speaker/durable/command", string: #"{"id":"d1","action":"pause"}"#)
        #expect(peer.waitForMessage(topic: "ambient-speaker/durable/command/result", timeout: 30) != nil, "\(daemon.log.suffix(2000))")
        // SIGTERM to the speaker itself (strace's first pid): strace then exits with its status.
        let speaker = try #require(Strace.calls(Files.readText(trace)).first.flatMap { pid_t($0.pid) })
        kill(speaker, SIGTERM)
        #expect(process.waitForExit(timeout: 20) == 0, "\(daemon.log.suffix(1500))")
        let calls = try Strace.calls(Files.readText(trace))
        for name in ["state.json", "revision", "revision.previous", "epoch", "commands.json"] {
            let path = daemon.stateDirectory + "/" + name
            let writes = Strace.atomicWrites(to: path, in: calls)
            #expect(!writes.isEmpty && writes.allSatisfy { $0.problem == nil },
                    "\(name): \(writes.map { $0.problem ?? "durable" })\n\(Strace.mentioning(path, in: calls))")
        }
    }

    @Test func settingsAreStagedSyncedRenamedAndTheirDirectoriesSynced() throws {
        let settings = try SettingsRoot()
        try Files.writeText(settings.settingsPath, SettingsRoot.good)
        let trace = settings.directory + "/strace.log"
        let child = try ChildProcess(executable: try Strace.path(),
                                     arguments: Strace.options(output: trace) + [try SpeakerProcess.binaryPath(), "apply-settings",
                                                                                "--settings", settings.settingsPath, "--root", settings.root,
                                                                                "--error-file", settings.errorPath],
                                     logPath: settings.outputPath)
        #expect(child.waitForExit(timeout: 120) == 0, "\((try? Files.readText(settings.outputPath)) ?? "")")
        let calls = try Strace.calls(Files.readText(trace))
        let targets = Set(calls.compactMap { $0.renamed?.to }.filter { $0.hasPrefix(settings.root + "/") })
        #expect(targets.count >= 3, "the settings replace several files: \(targets.sorted())")
        for target in targets.sorted() {
            let writes = Strace.atomicWrites(to: target, in: calls)
            #expect(!writes.isEmpty && writes.allSatisfy { $0.problem == nil },
                    "\(target): \(writes.map { $0.problem ?? "durable" })\n\(Strace.mentioning(target, in: calls))")
        }
    }
}

/// The trace checker itself, on written traces: it finds each missing step.
@Suite struct StraceCheckerTests {
    static let good = """
    7 openat(AT_FDCWD, "/s/.state.json.tmp-7-ab", O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC, 0644) = 5
    8 fsync(4 <unfinished ...>
    7 fsync(5)                                = 0
    8 <... fsync resumed>)                    = 0
    7 rename("/s/.state.json.tmp-7-ab", "/s/state.json") = 0
    7 openat(AT_FDCWD, "/s", O_RDONLY|O_CLOEXEC|O_DIRECTORY) = 6
    7 fsync(6)                                = 0
    """

    @Test func aCompleteWriteIsDurableAndEachMissingStepIsNamed() {
        let calls = Strace.calls(Self.good)
        #expect(calls.count == 6 && calls[2].name == "fsync" && calls[2].arguments == "4" && calls[2].result == "0")
        #expect(Strace.atomicWrites(to: "/s/state.json", in: calls).map(\.problem) == [nil])
        let noSync = Strace.calls(Self.good.replacingOccurrences("7 fsync(5)", with: "7 fsync(9)"))
        #expect(Strace.atomicWrites(to: "/s/state.json", in: noSync).first?.problem?.contains("not fsync'd before") == true)
        let noDirectory = Strace.calls(Self.good.replacingOccurrences("7 fsync(6)", with: "8 fsync(6)"))
        #expect(Strace.atomicWrites(to: "/s/state.json", in: noDirectory).first?.problem?.contains("directory") == true)
        #expect(Strace.atomicWrites(to: "/s/other", in: calls).isEmpty)
    }
}

/// strace as a test tool: whether it can trace here, how it is run, and its
/// output read back as calls.
enum Strace {
    /// One traced call: its pid, name, arguments text and result.
    struct Call {
        var pid: String
        var name: String
        var arguments: String
        var result: String
        /// The first quoted argument.
        var path: String? { Strace.quoted(arguments).first }
        /// Both paths of a successful rename / renameat / renameat2.
        var renamed: (from: String, to: String)? {
            guard name.hasPrefix("rename"), result == "0" else { return nil }
            let paths = Strace.quoted(arguments)
            return paths.count == 2 ? (paths[0], paths[1]) : nil
        }
    }

    static let paths = ["/usr/bin/strace", "/bin/strace"]
    static func path() throws -> String {
        guard let found = paths.first(where: { access($0, X_OK) == 0 }) else { throw DaemonTestError("strace", "not installed") }
        return found
    }

    /// Whether strace can trace a child here (it is installed and ptrace works).
    static let works: Bool = {
        guard let strace = paths.first(where: { access($0, X_OK) == 0 }) else { return false }
        return (try? Files.shell("'\(strace)' -f -qq -o /dev/null /bin/true", logPath: "/dev/null", timeout: 30)) == 0
    }()

    static func options(output: String) -> [String] {
        ["-f", "-qq", "-s", "256", "-o", output, "-e", "trace=openat,open,fsync,fdatasync,rename,renameat,renameat2,symlink,symlinkat,close"]
    }

    /// The calls of a trace, an interrupted call joined with its resumption.
    static func calls(_ text: String) -> [Call] {
        var pending: [String: String] = [:]
        var calls: [Call] = []
        for raw in text.split(separator: "\n") {
            var line = String(raw)
            guard let space = line.firstIndex(of: " ") else { continue }
            let pid = String(line[..<space])
            line = String(line[line.index(after: space)...]).drop(while: { $0 == " " }).description
            if line.hasSuffix("<unfinished ...>") {
                pending[pid] = String(String(line.dropLast("<unfinished ...>".count).reversed().drop(while: { $0 == " " })).reversed())
                continue
            }
            if line.hasPrefix("<... "), let resumed = find(" resumed>", in: line) {
                line = (pending.removeValue(forKey: pid) ?? "") + line[resumed.upperBound...]
            }
            // `name(arguments)` then the result, aligned with spaces: `fsync(3)      = 0`.
            guard let open = line.firstIndex(of: "("), let equals = find(" = ", in: line, last: true) else { continue }
            let call = line[..<equals.lowerBound].reversed().drop(while: { $0 == " " }).reversed()
            guard call.last == ")" else { continue }
            let result = line[equals.upperBound...].split(separator: " ").first.map(String.init) ?? ""
            calls.append(Call(pid: pid, name: String(line[..<open]),
                              arguments: String(String(call).dropFirst(line.distance(from: line.startIndex, to: open) + 1).dropLast()),
                              result: result))
        }
        return calls
    }

    /// Each rename onto `path` and what was wrong with the write it ended,
    /// if anything: the temporary opened with O_CREAT by the same thread,
    /// fsync'd on that descriptor before the rename, and the directory
    /// opened and fsync'd after it.
    static func atomicWrites(to path: String, in calls: [Call]) -> [(temporary: String, problem: String?)] {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        var found: [(String, String?)] = []
        for (index, call) in calls.enumerated() {
            guard let (temporary, target) = call.renamed, target == path else { continue }
            let before = calls[..<index].filter { $0.pid == call.pid }
            // A symbolic link has no data to sync: made in place, renamed, its directory synced.
            let linked = before.contains { $0.name.hasPrefix("symlink") && $0.result == "0" && Strace.quoted($0.arguments).last == temporary }
            if linked {
                let after = calls[(index + 1)...].filter { $0.pid == call.pid }
                let synced = after.first(where: { $0.name.hasPrefix("open") && $0.path == directory && $0.arguments.contains("O_DIRECTORY") })
                    .map { dir in after.contains { $0.name == "fsync" && $0.arguments == dir.result && $0.result == "0" } } ?? false
                found.append((temporary, synced ? nil : "the directory \(directory) was not fsync'd after the link's rename"))
                continue
            }
            guard let created = before.last(where: { $0.name.hasPrefix("open") && $0.path == temporary && $0.arguments.contains("O_CREAT") }) else {
                found.append((temporary, "no open with O_CREAT of the temporary")); continue
            }
            let fd = created.result
            guard let opened = before.lastIndex(where: { $0.name.hasPrefix("open") && $0.path == temporary && $0.arguments.contains("O_CREAT") }),
                  before[opened...].contains(where: { $0.name == "fsync" && $0.arguments == fd && $0.result == "0" }) else {
                found.append((temporary, "the temporary (fd \(fd)) was not fsync'd before the rename")); continue
            }
            let after = calls[(index + 1)...].filter { $0.pid == call.pid }
            guard let dir = after.first(where: { $0.name.hasPrefix("open") && $0.path == directory && $0.arguments.contains("O_DIRECTORY") }),
                  after.contains(where: { $0.name == "fsync" && $0.arguments == dir.result && $0.result == "0" }) else {
                found.append((temporary, "the directory \(directory) was not opened and fsync'd after the rename")); continue
            }
            found.append((temporary, nil))
        }
        return found
    }

    /// The calls that name `path` or its temporaries (for a failure message).
    static func mentioning(_ path: String, in calls: [Call]) -> String {
        let name = String(path[(path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex)...])
        return calls.filter { $0.arguments.contains(name) }.prefix(20)
            .map { "\($0.pid) \($0.name)(\($0.arguments)) = \($0.result)" }.joined(separator: "\n")
    }

    /// The first (or last) place of `needle` in `text`.
    static func find(_ needle: String, in text: String, last: Bool = false) -> Range<String.Index>? {
        var found: Range<String.Index>?
        var index = text.startIndex
        while index < text.endIndex {
            if text[index...].hasPrefix(needle) {
                found = index..<text.index(index, offsetBy: needle.count)
                if !last { return found }
            }
            index = text.index(after: index)
        }
        return found
    }

    /// The double-quoted strings of an argument list (strace escapes `"` as `\"`).
    static func quoted(_ text: String) -> [String] {
        var out: [String] = [], current = "", inside = false, escaped = false
        for c in text {
            if !inside { if c == "\"" { inside = true; current = "" }; continue }
            if escaped { current.append(c); escaped = false; continue }
            if c == "\\" { escaped = true; continue }
            if c == "\"" { inside = false; out.append(current); continue }
            current.append(c)
        }
        return out
    }
}
