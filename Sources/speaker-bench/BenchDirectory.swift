// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// A private temporary directory for one benchmark run (config, state
/// directory, raw audio output, the speaker's log), removed with everything
/// in it by `remove()`. One thread.
struct BenchDirectory {
    /// Absolute path, e.g. `/tmp/speaker-bench-Ab12Cd`.
    let path: String

    /// Creates a fresh directory under /tmp with `mkdtemp(3)`.
    init() throws {
        var template = Array("/tmp/speaker-bench-XXXXXX".utf8CString)
        // The name is read inside the closure: the buffer's pointer is valid only there.
        let made = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let made else { throw BenchError("mkdtemp: \(String(cString: strerror(errno)))") }
        path = made
    }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }

    /// Writes `text` to `path/name` (atomically).
    func write(_ name: String, text: String) throws {
        do { try FileIO.writeAtomically(path: file(name), text: text) } catch { throw BenchError("\(error)") }
    }

    /// Creates the directory `path/name` (mode 0755).
    func makeDirectory(_ name: String) throws {
        guard mkdir(file(name), 0o755) == 0 else { throw BenchError("mkdir(\(file(name))): \(String(cString: strerror(errno)))") }
    }

    /// The last `maxBytes` bytes of `path/name` as text ("" when unreadable).
    func tail(_ name: String, maxBytes: Int = 4096) -> String {
        guard let bytes = try? FileIO.read(path: file(name), maxBytes: 8 << 20) else { return "" }
        return String(decoding: bytes.suffix(maxBytes), as: UTF8.self)
    }

    /// Deletes the directory and everything below it (best effort).
    func remove() { Self.removeTree(path) }

    private static func removeTree(_ path: String) {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                let child = path + "/" + name
                var info = stat()
                if lstat(child, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR {
                    removeTree(child)
                } else {
                    unlink(child)
                }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}
