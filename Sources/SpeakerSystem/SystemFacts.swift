// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Facts about the running system that the speaker publishes or needs at start.
public enum SystemFacts {
    /// Whether the kernel considers the wall clock NTP-synchronised
    /// (`adjtimex(2)`: not `TIME_ERROR` and `STA_UNSYNC` clear). A Raspberry Pi
    /// has no RTC, so until NTP syncs its clock may be days off.
    public static func isClockSynchronised() -> Bool {
        csys_clock_synchronised() == 1
    }

    /// The host name (`gethostname(2)`), or `speaker` if it cannot be read.
    public static func hostname() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "speaker" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// File mode bits of `path` (`stat(2)`).
    public static func fileMode(path: String) throws(SystemError) -> mode_t {
        var st = stat()
        _ = try systemCall("stat", path: path) { stat(path, &st) }
        return st.st_mode
    }

    /// Whether `path` is a directory.
    public static func isDirectory(path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates `path` (and missing parents) as directories with `mode`.
    public static func makeDirectories(path: String, mode: mode_t = 0o755) throws(SystemError) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw SystemError(operation: "mkdir", errno: errno, path: prefix)
            }
        }
    }
}

/// A file opened for writing from the start (created or truncated), for
/// streaming output such as `render`. Blocking; one thread.
public final class OutputFile {
    public let path: String
    private var fd: Int32

    /// Opens `path` for writing (`open(O_WRONLY|O_CREAT|O_TRUNC)`).
    public init(path: String, mode: mode_t = 0o644) throws(SystemError) {
        self.path = path
        fd = try systemCall("open", path: path) { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
    }

    /// Writes all of `bytes` (retrying short writes and EINTR).
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let n = try systemCall("write", path: path) { Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset) }
            offset += n
        }
    }

    /// Writes all of `bytes`.
    public func write(bytes: [UInt8]) throws(SystemError) {
        var result: Result<Void, SystemError> = .success(())
        bytes.withUnsafeBytes { raw in
            do throws(SystemError) { try write(raw) } catch { result = .failure(error) }
        }
        try result.get()
    }

    /// Flushes to disk and closes (`fsync`, `close`).
    public func close() throws(SystemError) {
        guard fd >= 0 else { return }
        defer { fd = -1 }
        _ = try systemCall("fsync", path: path) { fsync(fd) }
        _ = Glibc.close(fd)
    }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }
}
