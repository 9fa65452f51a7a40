// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd about the service's state (`sd_notify(3)` protocol without
/// libsystemd): one datagram per message to the `$NOTIFY_SOCKET` Unix socket,
/// e.g. `READY=1`, `STOPPING=1`, `WATCHDOG=1`, `STATUS=…`.
///
/// Any thread (each message is one `sendto(2)` on a descriptor that is never
/// changed after init).
// @unchecked Sendable: stored properties are immutable after init.
public final class SystemdNotifier: @unchecked Sendable {
    /// The socket path (`@…` for the abstract namespace).
    public let socketPath: String
    private let fd: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t

    /// A notifier for `$NOTIFY_SOCKET`, or nil when not run by systemd
    /// (`Type=notify`) — then there is nothing to tell.
    public static func fromEnvironment() throws(SystemError) -> SystemdNotifier? {
        guard let value = getenv("NOTIFY_SOCKET") else { return nil }
        let path = String(cString: value)
        return path.isEmpty ? nil : try SystemdNotifier(socketPath: path)
    }

    /// A notifier sending to `socketPath` (a leading `@` means the abstract
    /// namespace). Throws if the path does not fit or no socket can be made.
    public init(socketPath: String) throws(SystemError) {
        self.socketPath = socketPath
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count > 1, bytes.count < capacity else {
            throw SystemError(operation: "sd_notify (bad NOTIFY_SOCKET)", errno: ENAMETOOLONG, path: socketPath)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        self.address = address
        // Abstract names are exactly their bytes; paths include the NUL.
        addressLength = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        fd = try systemCall("socket", path: socketPath) {
            socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        }
    }

    deinit { close(fd) }

    /// Sends `message` (lines like `READY=1\nSTATUS=playing`). Never blocks:
    /// when the receiver's queue is full the message is dropped with `EAGAIN`
    /// (a main loop must not stall on systemd, or its own watchdog fires).
    public func notify(_ message: String) throws(SystemError) {
        var address = address
        let length = addressLength
        let fd = fd
        let bytes = Array(message.utf8)
        _ = try systemCall("sendto", path: socketPath) {
            bytes.withUnsafeBytes { buffer in
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), $0, length)
                    }
                }
            }
        }
    }
}
