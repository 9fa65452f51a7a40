// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import TestSupport

/// A failure in the daemon test helpers, with what was being done.
struct DaemonTestError: Error, CustomStringConvertible {
    var description: String
    init(_ what: String, _ why: String = String(cString: strerror(errno))) { description = "\(what): \(why)" }
}

/// The built `ambient-speaker` running `run` in a private directory with a
/// simulated board and a file pcm — like TestSupport's `SpeakerProcess`, plus
/// what the lifecycle tests need: an environment (NOTIFY_SOCKET,
/// WATCHDOG_USEC), a state directory that outlives the process, restarts,
/// and the spawn time for start-up measurements. One thread.
final class Daemon {
    let directory: String
    let stateDirectory: String
    let deviceID: String
    private(set) var process: ChildProcess?
    /// `Monotonic.nanoseconds()` just before the last spawn.
    private(set) var spawnedAt: UInt64 = 0
    var configPath: String { directory + "/config.json" }
    var controlSocket: String { directory + "/control.sock" }
    var pcmPath: String { directory + "/out.raw" }
    var logPath: String { directory + "/speaker.log" }
    var statePath: String { stateDirectory + "/state.json" }
    var log: String { (try? Files.readText(logPath)) ?? "" }
    var topicRoot: String { "ambient-speaker/\(deviceID)" }

    /// Writes the config (`extraConfig`: raw JSON members merged at the top level).
    init(brokerPort: UInt16, deviceID: String = "daemon", extraConfig: String = "", stateDirectory: String? = nil) throws {
        directory = try Files.makeTemporaryDirectory("/tmp/speaker-daemon-XXXXXX")
        self.stateDirectory = stateDirectory ?? directory + "/state"
        self.deviceID = deviceID
        try writeConfig(brokerPort: brokerPort, extraConfig: extraConfig)
    }

    deinit { stop() }

    /// (Re)writes the config file (for SIGHUP tests).
    func writeConfig(brokerPort: UInt16, extraConfig: String) throws {
        var config = """
        {"device":{"id":"\(deviceID)"},"board":{"kind":"simulated","controlSocket":"\(controlSocket)"},
         "audio":{"device":"file:'\(pcmPath)',raw","fadeMs":100,"crossfadeMs":200},
         "mqtt":{"host":"127.0.0.1","port":\(brokerPort)},"stateDirectory":"\(stateDirectory)"
        """
        if !extraConfig.isEmpty { config += ",\n " + extraConfig }
        try Files.writeText(configPath, config + "}\n")
    }

    /// Starts the speaker (after any previous run has ended); `environment` entries are `KEY=value`.
    func start(environment: [String] = []) throws {
        stop()
        unlink(controlSocket)
        spawnedAt = Monotonic.nanoseconds()
        process = try ChildProcess(executable: try SpeakerProcess.binaryPath(),
                                   arguments: ["run", "--config", configPath, "--log-level", "debug"],
                                   logPath: logPath, environment: environment)
    }

    /// SIGKILLs a running process and reaps it.
    func stop() {
        guard let process else { return }
        process.send(SIGKILL)
        _ = process.waitForExit(timeout: 10)
        self.process = nil
    }

    /// Sends one line to the board's control socket; returns the reply line.
    /// Waits up to `timeout` s for the socket to appear (the speaker is starting).
    func control(_ line: String, timeout: Double = 15) throws -> String {
        try ControlSocket.send(line, to: controlSocket, timeout: timeout)
    }

    /// Whether any stereo frame in the pcm file so far is not silent, and how many bytes it holds.
    func pcmHasSound() -> (sound: Bool, bytes: Int) {
        guard let bytes = try? Files.read(pcmPath) else { return (false, 0) }
        let sound = bytes.withUnsafeBytes { raw in raw.bindMemory(to: Int16.self).contains { abs(Int($0)) > 32 } }
        return (sound, bytes.count)
    }

    /// Waits until the log contains `text` (up to `timeout` s).
    func waitForLog(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while Monotonic.nanoseconds() < deadline {
            if log.contains(text) { return true }
            Files.pause(milliseconds: 20)
        }
        return log.contains(text)
    }
}

/// Receives sd_notify datagrams on a private `NOTIFY_SOCKET`, with arrival times.
final class NotifyListener {
    let path: String
    private let fd: Int32
    /// Every datagram so far: arrival (`Monotonic.nanoseconds()`) and text.
    private(set) var messages: [(at: UInt64, text: String)] = []

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DaemonTestError("socket(AF_UNIX, SOCK_DGRAM)") }
        var address = Files.unixAddress(path)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else { throw DaemonTestError("bind(\(path))") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// `NOTIFY_SOCKET=…` for the child's environment.
    var environment: String { "NOTIFY_SOCKET=\(path)" }

    /// Waits up to `timeout` s for a message (new or already received) matching `check`.
    @discardableResult
    func wait(timeout: Double = 20, _ check: (String) -> Bool) -> (at: UInt64, text: String)? {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while true {
            if let hit = messages.first(where: { check($0.text) }) { return hit }
            let now = Monotonic.nanoseconds()
            guard now < deadline else { return nil }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, Int32(max(1, (deadline - now) / 1_000_000))) == 1 { drain() }
        }
    }

    /// Reads every queued datagram.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { return }
            messages.append((Monotonic.nanoseconds(), String(decoding: buffer[0..<n], as: UTF8.self)))
        }
    }
}

/// Small file and time helpers for the daemon tests.
enum Files {
    static func makeTemporaryDirectory(_ template: String) throws -> String {
        var chars = Array(template.utf8CString)
        guard let made = chars.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw DaemonTestError("mkdtemp")
        }
        return made
    }

    static func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw DaemonTestError("open(\(path))") }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out.append(contentsOf: chunk[0..<n])
        }
    }

    static func readText(_ path: String) throws -> String { String(decoding: try read(path), as: UTF8.self) }

    static func writeText(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw DaemonTestError("open(\(path))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else { throw DaemonTestError("write(\(path))") }
    }

    static func unixAddress(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        return address
    }

    /// Waits `milliseconds` (poll on no descriptors) — for tests that watch an outside process.
    static func pause(milliseconds: Int) {
        var entry = pollfd(fd: -1, events: 0, revents: 0)
        _ = poll(&entry, 0, Int32(milliseconds))
    }

    /// Names in `directory`.
    static func list(_ directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Runs `command` through `/bin/sh -c`, output to `logPath`; returns the exit code (nil on timeout).
    static func shell(_ command: String, logPath: String, timeout: Double) throws -> Int32? {
        let child = try ChildProcess(executable: "/bin/sh", arguments: ["-c", command], logPath: logPath)
        let code = child.waitForExit(timeout: timeout)
        if code == nil { child.send(SIGKILL); _ = child.waitForExit(timeout: 5) }
        return code
    }
}
