// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Whole-file reads and crash-safe whole-file writes. Every error names the
/// path. Blocking I/O: call from the loop thread only for small files
/// (config, state), or from a worker thread. Any thread.
public enum FileIO {
    /// Reads the whole regular file at `path` (`open`/`fstat`/`read`/`close`).
    /// Throws `EFBIG` if it is larger than `maxBytes`, and refuses anything
    /// that is not a regular file (FIFO, device, socket, directory) with
    /// `EINVAL` and the file's kind: it is opened with `O_NONBLOCK`, so a FIFO
    /// without a writer cannot block start-up or a reload. With
    /// `followSymlinks: false` (`O_NOFOLLOW`) a symbolic link is refused (`ELOOP`).
    public static func read(path: String, maxBytes: Int = 1 << 20, followSymlinks: Bool = true) throws(SystemError) -> [UInt8] {
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followSymlinks ? 0 : O_NOFOLLOW)
        let fd = try systemCall("open", path: path) { open(path, flags) }
        defer { close(fd) }
        var info = stat()
        _ = try systemCall("fstat", path: path) { fstat(fd, &info) }
        if let kind = nonRegularKind(info.st_mode) {
            throw SystemError(operation: "open", errno: EINVAL, path: path, detail: "refused: a \(kind), not a regular file")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let got = try systemCall("read", path: path) {
                chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            }
            if got == 0 { return bytes }
            if bytes.count + got > maxBytes {
                throw SystemError(operation: "read (over \(maxBytes) bytes)", errno: EFBIG, path: path)
            }
            bytes.append(contentsOf: chunk[0..<got])
        }
    }

    /// Reads the whole regular file at `path` as UTF-8 text (invalid bytes become U+FFFD).
    public static func readText(path: String, maxBytes: Int = 1 << 20, followSymlinks: Bool = true) throws(SystemError) -> String {
        String(decoding: try read(path: path, maxBytes: maxBytes, followSymlinks: followSymlinks), as: UTF8.self)
    }

    /// The kind of a non-regular file (`"FIFO"`, `"directory"`…), or nil for a regular one.
    static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFIFO: return "FIFO"
        case S_IFDIR: return "directory"
        case S_IFCHR: return "character device"
        case S_IFBLK: return "block device"
        case S_IFSOCK: return "socket"
        case S_IFLNK: return "symbolic link"
        default: return "special file"
        }
    }

    /// Reads exactly `count` bytes from the start of `path` (e.g. `/dev/urandom`);
    /// throws `EIO` if the file is shorter.
    public static func read(path: String, exactly count: Int) throws(SystemError) -> [UInt8] {
        let fd = try systemCall("open", path: path) { open(path, O_RDONLY | O_CLOEXEC) }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = try systemCall("read", path: path) {
                bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, count - filled) }
            }
            if got == 0 { throw SystemError(operation: "read (short file)", errno: EIO, path: path) }
            filled += got
        }
        return bytes
    }

    /// Replaces `path` with `bytes` atomically: writes a temporary file in
    /// the same directory, `fsync`s it, `rename`s it over `path`, then
    /// `fsync`s the directory — after a power cut the file is either the old
    /// or the new content, never a mix. The temporary file is removed on error.
    public static func writeAtomically(path: String, bytes: [UInt8], mode: mode_t = 0o644) throws(SystemError) {
        let (directory, name) = split(path)
        let suffix = randomBytes(4).map { String($0, radix: 16) }.joined()
        let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(suffix)"
        let fd = try systemCall("open", path: temporary) {
            open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        }
        do throws(SystemError) {
            try writeAll(fd: fd, bytes: bytes, path: temporary)
            _ = try systemCall("fsync", path: temporary) { fsync(fd) }
            let closed = close(fd)
            if closed != 0 && errno != EINTR { throw SystemError(operation: "close", errno: errno, path: temporary) }
            _ = try systemCall("rename", path: path) { rename(temporary, path) }
        } catch {
            close(fd)  // harmless EBADF if already closed
            unlink(temporary)
            throw error
        }
        let directoryFD = try systemCall("open", path: directory) { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        defer { close(directoryFD) }
        _ = try systemCall("fsync", path: directory) { fsync(directoryFD) }
    }

    /// ``writeAtomically(path:bytes:mode:)`` for UTF-8 text.
    public static func writeAtomically(path: String, text: String, mode: mode_t = 0o644) throws(SystemError) {
        try writeAtomically(path: path, bytes: Array(text.utf8), mode: mode)
    }

    /// Writes all of `bytes` to a blocking descriptor (retries short writes).
    public static func writeAll(fd: Int32, bytes: [UInt8], path: String? = nil) throws(SystemError) {
        var offset = 0
        while offset < bytes.count {
            let wrote = try systemCall("write", path: path) {
                bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            }
            offset += wrote
        }
    }

    /// The names in `directory` (`opendir`/`readdir`/`closedir`), without `.` and `..`.
    public static func names(in directory: String) throws(SystemError) -> [String] {
        guard let dir = opendir(directory) else { throw SystemError(operation: "opendir", errno: errno, path: directory) }
        defer { closedir(dir) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw SystemError(operation: "readdir", errno: errno, path: directory) }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
    }

    /// Removes the file at `path` (`unlink`).
    public static func remove(path: String) throws(SystemError) {
        _ = try systemCall("unlink", path: path) { unlink(path) }
    }

    /// Splits `path` into its directory ("." when there is none) and last component.
    public static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = String(path[..<slash])
        return (directory.isEmpty ? "/" : directory, String(path[path.index(after: slash)...]))
    }
}
