// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Makes a process a slow board: a thread of the test stops it (SIGSTOP)
/// and lets it run (SIGCONT) in turn, `runMs` of every `runMs + pauseMs`,
/// so it gets that fraction of a core whatever the host's load — the
/// speaker is slow, not the test. The waits are polls on a pipe that
/// ``stop()`` writes, so stopping is immediate; the process is left running.
public final class CPUThrottle: @unchecked Sendable {
    private let pid: pid_t
    private let runMs: Int32
    private let pauseMs: Int32
    private var stopPipe: (read: Int32, write: Int32) = (-1, -1)
    private var thread: pthread_t?

    public init(pid: pid_t, runMs: Int32, pauseMs: Int32) throws {
        self.pid = pid
        self.runMs = runMs
        self.pauseMs = pauseMs
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw TestSupportError("pipe", String(cString: strerror(errno))) }
        stopPipe = (fds[0], fds[1])
        var t = pthread_t()
        guard pthread_create(&t, nil, throttleThreadMain, Unmanaged.passUnretained(self).toOpaque()) == 0 else {
            throw TestSupportError("pthread_create", "failed")
        }
        thread = t
    }

    deinit {
        stop()
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Ends the throttling; the process runs freely from here.
    public func stop() {
        guard let t = thread else { return }
        thread = nil
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        pthread_join(t, nil)
        kill(pid, SIGCONT)
    }

    /// True when `stop()` was asked during the wait.
    private func stopAsked(within milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)
        while true {
            let n = poll(&entry, 1, milliseconds)
            if n < 0 && errno == EINTR { continue }
            return n > 0
        }
    }

    fileprivate func run() {
        while true {
            kill(pid, SIGCONT)
            if stopAsked(within: runMs) { break }
            kill(pid, SIGSTOP)
            if stopAsked(within: pauseMs) { break }
        }
        kill(pid, SIGCONT)
    }
}

private func throttleThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<CPUThrottle>.fromOpaque(context).takeUnretainedValue().run()
    return nil
}
