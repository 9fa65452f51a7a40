// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import SpeakerSystem

/// Writes the settings file's blanked text over its old bytes in place, so
/// on FAT the clusters that held the secrets are overwritten rather than
/// freed with the secrets inside. Never leaves the file invalid: the file
/// grows (when it must) before a byte is overwritten, so a full boot
/// partition fails with the old file intact; and a file saved again since
/// it was read is left alone. Blocking file I/O; one thread.
enum SettingsBlanking {
    /// Overwrites `path`, which held `expected`, with `blanked` (or, when
    /// the partition has no room for it to grow, its compact form if that
    /// fits in the old size);
    /// answers the bytes the file now holds, or nil when it no longer held
    /// `expected` (saved again: nothing written).
    static func overwrite(_ path: String, expecting expected: [UInt8], with blanked: [UInt8]) throws(SystemError) -> [UInt8]? {
        let fd = try systemCall("open", path: path) { open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC) }
        defer { close(fd) }
        guard try current(fd, path: path, limit: expected.count + 1) == expected else { return nil }
        let size = expected.count
        var text = blanked
        if text.count > size {
            // Grow first: on a full partition this fails before a byte is
            // overwritten; then the compact text, if it fits in the old size.
            if !grow(fd, to: text.count) {
                let e = errno
                _ = ftruncate(fd, off_t(size))
                guard let value = try? JSONParser(maxDepth: 16).parse(blanked),
                      case let compact = Array((value.jsonText + "\n").utf8), compact.count <= size else {
                    throw SystemError(operation: "ftruncate (the blanked file needs \(text.count - size) more bytes)", errno: e, path: path)
                }
                text = compact
            }
        }
        let padded = text + [UInt8](repeating: 0x20, count: max(0, size - text.count))
        var offset = 0
        while offset < padded.count {
            let wrote = try systemCall("pwrite", path: path) {
                padded.withUnsafeBytes { pwrite(fd, $0.baseAddress! + offset, $0.count - offset, off_t(offset)) }
            }
            offset += wrote
        }
        _ = try systemCall("fsync", path: path) { fsync(fd) }
        _ = try systemCall("ftruncate", path: path) { ftruncate(fd, off_t(text.count)) }
        _ = try systemCall("fsync", path: path) { fsync(fd) }
        return text
    }

    /// Allocates the file's blocks up to `length` (`posix_fallocate`, so the
    /// writes after it cannot run out of space); false with errno set when
    /// there is no room.
    private static func grow(_ fd: Int32, to length: Int) -> Bool {
        while true {
            let rc = posix_fallocate(fd, 0, off_t(length))
            if rc == 0 { return true }
            if rc == EINTR { continue }
            errno = rc
            return false
        }
    }

    /// The file's bytes through `fd`, at most `limit` of them.
    private static func current(_ fd: Int32, path: String, limit: Int) throws(SystemError) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while out.count < limit {
            let got = try systemCall("pread", path: path) {
                buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress!, min($0.count, limit - out.count), off_t(out.count)) }
            }
            if got == 0 { break }
            out += buffer[0..<got]
        }
        return out
    }
}
