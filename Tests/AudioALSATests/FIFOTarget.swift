// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A named pipe that an alsa-lib file pcm (`file:'PATH',raw`) writes into:
/// the "device" works while a reader holds the pipe open and breaks (the
/// pcm's writes fail with EIO) when the reader goes away, like an unplugged
/// USB DAC. Test thread only.
final class FIFOTarget {
    let path: String
    private var reader: Int32 = -1
    private(set) var bytesRead = 0

    init(name: String) {
        // Writing to a pipe without a reader raises SIGPIPE; the speaker ignores
        // it too (the failed write is what reports the broken device).
        signal(SIGPIPE, SIG_IGN)
        path = "/tmp/ambience-\(getpid())-\(name).fifo"
        unlink(path)
        mkfifo(path, 0o600)
        connect()
    }

    deinit {
        disconnect()
        unlink(path)
    }

    /// Opens the reading end (non-blocking): the device "is plugged in".
    func connect() {
        if reader < 0 { reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        // 1 MiB: room for the engine's last buffer at shutdown when nobody drains.
        if reader >= 0 { _ = fcntl(reader, 1031 /* F_SETPIPE_SZ */, 1 << 20) }
    }

    /// Closes the reading end: the device "is unplugged".
    func disconnect() {
        if reader >= 0 { close(reader) }
        reader = -1
    }

    /// Reads whatever is in the pipe (so the writer never blocks for long).
    func drain() {
        guard reader >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if n <= 0 { return }
            bytesRead += n
        }
    }
}
