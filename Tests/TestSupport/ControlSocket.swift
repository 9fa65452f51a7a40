// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A client of the simulated board's control socket (`board.controlSocket`):
/// one command line out, one reply line back.
public enum ControlSocket {
    /// Sends `line` to the Unix socket at `path` and returns the reply line
    /// (`ok`, `error: …`, `up=N down=M`). Waits up to `timeout` seconds for the
    /// socket to appear (the speaker may still be starting) and for the reply.
    public static func send(_ line: String, to path: String, timeout: Double = 20) throws -> String {
        let controlSocket = path
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw TestSupportError("socket(AF_UNIX)", String(cString: strerror(errno))) }
            defer { close(fd) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, b) in controlSocket.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
            }
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if rc != 0 {
                guard Monotonic.nanoseconds() < deadline, errno == ENOENT || errno == ECONNREFUSED else {
                    throw TestSupportError("connect(\(controlSocket))", String(cString: strerror(errno)))
                }
                var entry = pollfd(fd: -1, events: 0, revents: 0)
                _ = poll(&entry, 0, 20) // the socket is not there yet: the speaker is starting
                continue
            }
            let request = Array((line + "\n").utf8)
            _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            var reply: [UInt8] = []
            var byte: UInt8 = 0
            while reply.count < 4096 {
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, Int32(timeout * 1000)) == 1, read(fd, &byte, 1) == 1 else { break }
                if byte == UInt8(ascii: "\n") { break }
                reply.append(byte)
            }
            return String(decoding: reply, as: UTF8.self)
        }
    }
}
