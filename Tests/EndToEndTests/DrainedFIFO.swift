// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import TestSupport

/// A named pipe that the speaker's alsa-lib file pcm writes into, drained
/// by a thread of its own while "plugged in"; closing the reading end
/// "unplugs" it (the pcm's writes then fail). Any thread.
///
/// `@unchecked Sendable`: the reader fd and the byte count live in a `Monitor`.
final class DrainedFIFO: @unchecked Sendable {
    let path: String
    private struct State {
        var reader: Int32 = -1
        var bytes = 0
        var running = true
        var finished = false
    }
    private let state = Monitor(State())

    /// Creates the pipe, opens its reading end and starts draining.
    init() throws {
        signal(SIGPIPE, SIG_IGN)
        path = "/tmp/speaker-e2e-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).fifo"
        unlink(path)
        guard mkfifo(path, 0o600) == 0 else { throw DrainedFIFOError(message: "mkfifo \(path): \(String(cString: strerror(errno)))") }
        connect()
        let thread = Thread { [self] in drain() }
        thread.name = "fifo-drain"
        thread.start()
    }

    /// Bytes read from the pipe so far.
    var bytesRead: Int { state.read(\.bytes) }

    /// Opens the reading end (non-blocking): the device "is plugged in".
    func connect() {
        state.update { s in
            guard s.reader < 0 else { return }
            s.reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            if s.reader >= 0 { _ = fcntl(s.reader, 1031 /* F_SETPIPE_SZ */, 1 << 20) }
        }
    }

    /// Closes the reading end: the device "is unplugged".
    func disconnect() {
        state.update { s in
            if s.reader >= 0 { close(s.reader) }
            s.reader = -1
        }
    }

    /// Waits until more than `count` bytes have been read in all.
    func waitForBytes(_ count: Int, timeout: Double) -> Bool {
        state.wait(timeout: timeout) { $0.bytes > count ? true : nil } ?? false
    }

    /// Stops the drain thread, closes the pipe and removes it.
    func stop() {
        state.update { $0.running = false }
        _ = state.wait(timeout: 10) { $0.finished ? true : nil }
        disconnect()
        unlink(path)
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while state.update({ s -> Bool in
            guard s.running else { return false }
            while s.reader >= 0 {
                let n = buffer.withUnsafeMutableBytes { read(s.reader, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                s.bytes += n
            }
            return true
        }) {
            var nothing = pollfd(fd: -1, events: 0, revents: 0)
            _ = poll(&nothing, 0, 5)  // a pipe of 1 MiB holds 5 s of audio: 5 ms between drains is plenty
        }
        state.update { $0.finished = true }
    }
}

struct DrainedFIFOError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
