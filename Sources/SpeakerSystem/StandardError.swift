// SPDX-License-Identifier: Apache-2.0
/// The one writer to standard error (fd 2), for log lines and for the
/// command-line tools' messages alike: unbuffered, the whole text in one
/// `write(2)` (short writes retried through the funnel), so lines from
/// different threads never interleave. A failed write has nowhere to be
/// reported and is dropped. Any thread.
public enum StandardError {
    /// Writes `text` as it is (add the newline yourself).
    public static func write(_ text: String) {
        try? FileIO.writeAll(fd: 2, bytes: Array(text.utf8), path: "stderr")
    }
}

/// Writes `<N>component: message` lines to stderr (journald reads the prefix)
/// through ``StandardError``.
public struct StderrLogBackend: LogBackend {
    public init() {}

    public func write(level: LogLevel, component: String, message: String) {
        StandardError.write("<\(level.rawValue)>\(component): \(message)\n")
    }
}
