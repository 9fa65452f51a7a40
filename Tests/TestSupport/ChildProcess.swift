// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// A child process for tests and benchmarks: spawned with default signal
/// dispositions and nothing blocked (the test runner's threads may block
/// SIGTERM, and posix_spawn would pass that on), output to a log file,
/// waited for through a pidfd with a timeout. Use from one thread.
public final class ChildProcess: @unchecked Sendable {
    public let executable: String
    public let pid: pid_t
    private let pidFD: Int32
    private var status: Int32?

    /// Spawns `executable` with `arguments` (argv[1...]); stdin is /dev/null,
    /// stdout and stderr append to `logPath` (stderr to `errorPath` when
    /// given). `environment` entries are `KEY=value` added to the current environment.
    public init(executable: String, arguments: [String], logPath: String, errorPath: String? = nil,
                environment: [String] = []) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var env: [UnsafeMutablePointer<CChar>?] = []
        var index = 0
        while let entry = environ[index] { env.append(strdup(entry)); index += 1 }
        env += environment.map { strdup($0) }
        env.append(nil)
        defer { env.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, &argv, &env)
        guard rc == 0 else { throw TestSupportError("posix_spawn(\(executable))", String(cString: strerror(rc))) }
        pid = child
        pidFD = (try? Descriptors.openPidFD(child)) ?? -1
    }

    deinit {
        if status == nil {
            Glibc.kill(pid, SIGKILL)
            _ = waitForExit(timeout: 5)
        }
        if pidFD >= 0 { close(pidFD) }
    }

    /// Sends `signal` to the process (if it still runs).
    public func send(_ signal: Int32) {
        if status == nil { Glibc.kill(pid, signal) }
    }

    /// Whether the process has not been reaped yet.
    public var isRunning: Bool { status == nil && !exited(within: 0) }

    /// Waits up to `timeout` seconds for the process to end. Returns its exit
    /// code, `128 + signal` when a signal killed it, or nil on timeout.
    public func waitForExit(timeout: Double) -> Int32? {
        if let status { return status }
        guard exited(within: Int32(timeout * 1000)) else { return nil }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        let code = raw & 0x7F == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
        status = code
        return code
    }

    private func exited(within milliseconds: Int32) -> Bool {
        guard pidFD >= 0 else {
            var info = siginfo_t()
            return waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info._sifields._sigchld.si_pid == pid
        }
        var entry = pollfd(fd: pidFD, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&entry, 1, milliseconds)
            if n < 0 && errno == EINTR { continue }
            return n > 0
        }
    }
}
