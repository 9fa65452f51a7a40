// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CSystemShim

/// Small descriptor operations for adapter modules, each through the
/// ``systemCall(_:path:_:)`` funnel with a typed ``SystemError``, so that no
/// adapter calls `fcntl`/`inotify`/`read` itself or ignores their results.
public enum Descriptors {
    /// Adds `O_NONBLOCK` to `fd`'s status flags (`fcntl` `F_GETFL`, then `F_SETFL`).
    public static func setNonBlocking(_ fd: Int32) throws(SystemError) {
        let flags = try systemCall("fcntl(F_GETFL)") { fcntl(fd, F_GETFL) }
        _ = try systemCall("fcntl(F_SETFL)") { fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
    }

    /// Sets `FD_CLOEXEC` on `fd` (`fcntl` `F_SETFD`), so a spawned program does not inherit it.
    public static func setCloseOnExec(_ fd: Int32) throws(SystemError) {
        _ = try systemCall("fcntl(F_SETFD)") { fcntl(fd, F_SETFD, FD_CLOEXEC) }
    }

    /// Turns TCP_CORK on `socket` on or off (`setsockopt(IPPROTO_TCP, TCP_CORK)`):
    /// while on, the kernel holds partial segments, so packets written back
    /// to back leave as one segment when it goes off.
    public static func setTCPCork(_ socket: Int32, _ on: Bool) throws(SystemError) {
        _ = try systemCall("setsockopt(TCP_CORK)") { csys_set_tcp_cork(socket, on ? 1 : 0) }
    }

    /// A descriptor that becomes readable when process `pid` exits
    /// (`pidfd_open(2)`); `ENOSYS` on kernels before 5.3. The caller closes it.
    public static func openPidFD(_ pid: pid_t) throws(SystemError) -> Int32 {
        try systemCall("pidfd_open") { csys_pidfd_open(pid) }
    }

    /// Closes `fd` once. Not retried on `EINTR`: on Linux the descriptor is
    /// released even then, and a retry could close a descriptor another
    /// thread has just been given. For descriptors a library handed out.
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }
}

/// An `inotify(7)` watch on one directory for deleted entries (e.g. a
/// `/dev/gpiochipN` node vanishing). Non-blocking and close-on-exec: register
/// ``fd`` with the ``EventLoop`` and call ``deletedNames()`` when it is
/// readable. Loop thread only; the descriptor is closed on deinit.
public final class DirectoryDeletionWatch {
    /// The descriptor to poll for readability.
    public let fd: Int32
    /// The watched directory.
    public let directory: String

    /// Starts watching `directory` for `IN_DELETE`.
    public init(directory: String) throws(SystemError) {
        self.directory = directory
        let fd = try systemCall("inotify_init1") { inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC)) }
        do throws(SystemError) {
            _ = try systemCall("inotify_add_watch", path: directory) { inotify_add_watch(fd, directory, UInt32(IN_DELETE)) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// The names deleted since the last call (empty when nothing is pending).
    public func deletedNames() throws(SystemError) -> [String] {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let got = try systemCallUnlessWouldBlock("read", path: directory) {
            buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        }
        return Self.names(in: buffer.prefix(got ?? 0))
    }

    /// Parses a read(2) result of `struct inotify_event` records into their names.
    static func names(in bytes: ArraySlice<UInt8>) -> [String] {
        let header = MemoryLayout<inotify_event>.size
        // `len` is a stored field of the C struct, so its offset is always known.
        guard let lengthOffset = MemoryLayout<inotify_event>.offset(of: \inotify_event.len) else { return [] }
        let bytes = Array(bytes)
        var names: [String] = []
        var offset = 0
        while offset + header <= bytes.count {
            let length = bytes.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + lengthOffset, as: UInt32.self)) }
            let nameBytes = bytes[(offset + header)..<min(bytes.count, offset + header + length)]
            names.append(String(decoding: nameBytes.prefix(while: { $0 != 0 }), as: UTF8.self))
            offset += header + length
        }
        return names
    }
}
