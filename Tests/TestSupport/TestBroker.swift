// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// A private `mosquitto` broker on a free loopback port, with its own config,
/// log and (optional) persistence file in a temporary directory. Each test
/// starts its own, so tests can run in parallel.
///
/// Use from one thread at a time (the test's). `@unchecked Sendable` so a
/// test may hand it to a helper; the mutable state (`pid`, `pidFD`) is only
/// touched by the calls of whoever owns it.
public final class TestBroker: @unchecked Sendable {
    /// The loopback port; the same across `restart()`.
    public private(set) var port: UInt16
    /// Always 127.0.0.1.
    public let host = "127.0.0.1"
    /// The temporary directory holding config, log and database.
    public let directory: String
    /// Whether the broker saves its state to disk (for restart tests).
    public let persistence: Bool
    /// Port of the second listener (e.g. TLS), when `secondListener` was given.
    public private(set) var secondPort: UInt16?
    /// Whether clients may connect without a user name.
    public let anonymous: Bool
    private let extraConfig: [String]
    private let secondListener: [String]?
    private var pid: pid_t = 0
    private var pidFD: Int32 = -1

    /// Starts a broker and returns once it accepts TCP connections
    /// (bounded wait, about 5 s). Throws when mosquitto is missing or exits.
    /// - Parameters:
    ///   - extraConfig: global mosquitto.conf lines (e.g. `password_file …`, `autosave_interval 1`).
    ///   - anonymous: `allow_anonymous`; false needs a `password_file` line.
    ///   - secondListener: lines for a second listener on `secondPort`
    ///     (e.g. `cafile`/`certfile`/`keyfile` for TLS).
    public init(persistence: Bool = false, extraConfig: [String] = [], anonymous: Bool = true,
                secondListener: [String]? = nil) throws {
        self.persistence = persistence
        self.extraConfig = extraConfig
        self.anonymous = anonymous
        self.secondListener = secondListener
        directory = try makeTemporaryDirectory(prefix: "test-broker")
        port = 0
        var lastError: (any Error)? = nil
        for _ in 0..<3 {  // another process may grab the free port first
            port = try FreePort.find()
            if secondListener != nil { secondPort = try FreePort.find() }
            do {
                try start()
                return
            } catch {
                lastError = error
            }
        }
        removeFiles()
        throw lastError ?? TestSupportError("TestBroker", "could not start")
    }

    deinit {
        stop()
        removeFiles()
    }

    /// Whether the broker process is running (started and not yet reaped).
    public var isRunning: Bool { pid > 0 }

    /// The broker's log so far (for failure messages).
    public var log: String { readFile("mosquitto.log") }

    /// Starts the broker on `port` (again) and waits until it accepts connections.
    public func start() throws {
        guard pid == 0 else { return }
        try writeConfig()
        let executable = try Self.mosquittoPath()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/stdout.log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/stdout.log", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        // Start the broker with default signal dispositions and nothing
        // blocked: the test runner's threads may block or ignore SIGTERM,
        // and posix_spawn would pass that on.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let arguments = [executable, "-c", directory + "/mosquitto.conf"]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, &argv, environ)
        guard rc == 0 else { throw TestSupportError("posix_spawn(\(executable))", String(cString: strerror(rc))) }
        pid = child
        pidFD = (try? Descriptors.openPidFD(child)) ?? -1
        try waitUntilAccepting(timeout: 5)
    }

    /// Stops the broker with SIGTERM (it saves its database when persistent)
    /// and reaps it; SIGKILL after 5 s. No-op when not running.
    public func stop() {
        guard pid > 0 else { return }
        Glibc.kill(pid, SIGTERM)
        if !waitForExit(milliseconds: 5000) { Glibc.kill(pid, SIGKILL) }
        reap()
    }

    /// Kills the broker with SIGKILL (no clean shutdown, no database save) and reaps it.
    public func kill() {
        guard pid > 0 else { return }
        Glibc.kill(pid, SIGKILL)
        reap()
    }

    /// Stops the broker and starts it again on the same port.
    public func restart() throws {
        stop()
        try start()
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if pidFD >= 0 { close(pidFD) }
        pidFD = -1
        pid = 0
    }

    /// Waits on the pidfd for the process to exit; false on timeout. Without
    /// a pidfd (old kernel) reports false, and the caller escalates.
    private func waitForExit(milliseconds: Int32) -> Bool {
        guard pidFD >= 0 else { return false }
        var entry = pollfd(fd: pidFD, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&entry, 1, milliseconds)
            if n < 0 && errno == EINTR { continue }
            return n > 0
        }
    }

    /// Tries TCP connects to the port until one succeeds, the broker exits
    /// (then throws with its log), or `timeout` seconds pass. Between refused
    /// attempts it waits on the broker's pidfd for 20 ms, so an early exit is
    /// noticed at once.
    private func waitUntilAccepting(timeout: Double) throws {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while Monotonic.nanoseconds() < deadline {
            if tryConnect() { return }
            if waitForExit(milliseconds: 20) || (pidFD < 0 && waitpid(pid, nil, WNOHANG) == pid) {
                reap()
                throw TestSupportError("mosquitto exited on port \(port)", log + readFile("stdout.log"))
            }
        }
        stop()
        throw TestSupportError("mosquitto not accepting on port \(port) after \(timeout) s", log)
    }

    /// One non-blocking connect to 127.0.0.1:port with a 100 ms poll.
    private func tryConnect() -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = FreePort.loopback(port: port)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&entry, 1, 100) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error == 0
    }

    private func writeConfig() throws {
        var lines = [
            "listener \(port) 127.0.0.1",
            "allow_anonymous \(anonymous)",
            "set_tcp_nodelay true",
            "log_dest file \(directory)/mosquitto.log",
            "log_type all",
            "persistence \(persistence)",
        ]
        if persistence { lines.append("persistence_location \(directory)/") }
        lines += extraConfig
        if let secondListener, let secondPort {
            lines.append("listener \(secondPort) 127.0.0.1")
            lines += secondListener
        }
        if geteuid() == 0 { lines.append("user root") }  // else mosquitto drops to user "mosquitto"
        let text = lines.joined(separator: "\n") + "\n"
        guard let file = fopen(directory + "/mosquitto.conf", "w") else {
            throw TestSupportError("fopen(mosquitto.conf)", String(cString: strerror(errno)))
        }
        defer { fclose(file) }
        guard fputs(text, file) >= 0 else { throw TestSupportError("fputs(mosquitto.conf)", String(cString: strerror(errno))) }
    }

    private func readFile(_ name: String) -> String {
        guard let file = fopen(directory + "/" + name, "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        var text = ""
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            text += String(cString: buffer)
        }
        return text
    }

    private func removeFiles() {
        for name in ["mosquitto.conf", "mosquitto.log", "stdout.log", "mosquitto.db"] {
            unlink(directory + "/" + name)
        }
        rmdir(directory)
    }

    /// /usr/sbin/mosquitto, else the first `mosquitto` on PATH.
    static func mosquittoPath() throws -> String {
        var candidates = ["/usr/sbin/mosquitto"]
        if let path = getenv("PATH") {
            candidates += String(cString: path).split(separator: ":").map { "\($0)/mosquitto" }
        }
        guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw TestSupportError("mosquitto", "not found in /usr/sbin or PATH (apt-get install mosquitto)")
        }
        return found
    }
}
