// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Reads single key presses from a terminal (stdin by default) through the
/// ``EventLoop``: switches the terminal to non-canonical, no-echo mode
/// (`tcsetattr`), decodes bytes with ``KeyDecoder`` and calls `onKey` on the
/// loop thread. Output processing and `ISIG` stay on, so `\n` still prints a
/// new line and Ctrl-C still raises SIGINT.
///
/// The original terminal settings come back on ``restore()`` and on deinit.
/// `main` must also call ``restore()`` from its SIGINT/SIGTERM handler (the
/// signalfd one) before exiting, or the shell is left without echo.
/// Loop thread only.
public final class TerminalKeys {
    /// The terminal descriptor being read.
    public let fd: Int32
    private let loop: EventLoop
    private let onKey: (Key) -> Void
    private var original: termios?
    private var registration: EventLoop.Registration?
    private var decoder = KeyDecoder()

    /// Puts `fd` in raw-key mode and starts reading it. Throws `ENOTTY`
    /// (from `tcgetattr`) when `fd` is not a terminal.
    public init(loop: EventLoop, fd: Int32 = STDIN_FILENO, onKey: @escaping (Key) -> Void) throws(SystemError) {
        self.fd = fd
        self.loop = loop
        self.onKey = onKey
        var settings = termios()
        _ = try systemCall("tcgetattr") { tcgetattr(fd, &settings) }
        original = settings
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &settings.c_cc) { cc in
            cc[Int(VMIN)] = 1   // read returns as soon as one byte is there
            cc[Int(VTIME)] = 0
        }
        _ = try systemCall("tcsetattr") { tcsetattr(fd, TCSANOW, &settings) }
        registration = loop.addReader(fd: fd) { [unowned self] in self.readKeys() }
    }

    deinit { restore() }

    /// Stops reading and restores the terminal settings found at init.
    /// Idempotent; best effort (a vanished terminal is ignored).
    public func restore() {
        if let registration { loop.remove(registration) }
        registration = nil
        if var settings = original {
            _ = try? systemCall("tcsetattr") { tcsetattr(fd, TCSANOW, &settings) }
            original = nil
        }
    }

    private func readKeys() {
        // Readable, so one read(2) of a blocking tty returns without waiting;
        // stdin stays blocking because O_NONBLOCK would leak to stdout.
        var buffer = [UInt8](repeating: 0, count: 64)
        let fd = fd
        let got = (try? systemCall("read") { buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }) ?? 0
        guard got > 0 else {
            if let registration { loop.remove(registration) }
            registration = nil
            onKey(.endOfInput)
            return
        }
        for key in decoder.feed(buffer[0..<got]) { onKey(key) }
    }
}
