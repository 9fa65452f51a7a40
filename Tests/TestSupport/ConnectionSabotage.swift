// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Breaks TCP connections of *this* process without the code that owns them
/// noticing beforehand: the broker sees the connection close with no MQTT
/// DISCONNECT, exactly as when the speaker's process dies or its network
/// goes away, so it publishes the will. The owner's fd stays valid (it is
/// shut down, not closed); libmosquitto sees EOF and reconnects.
public enum ConnectionSabotage {
    /// Calls `shutdown(SHUT_RDWR)` on every IPv4 socket in this process whose
    /// peer is 127.0.0.1:`port`, except those in `excluding` (e.g. a
    /// `TestPeer`'s socket). Returns how many were shut down. Any thread.
    @discardableResult
    public static func shutDownConnections(toPort port: UInt16, excluding: Set<Int32> = []) -> Int {
        guard let directory = opendir("/proc/self/fd") else { return 0 }
        defer { closedir(directory) }
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if let fd = Int32(name) { descriptors.append(fd) }
        }
        var count = 0
        for fd in descriptors where !excluding.contains(fd) {
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let rc = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
            }
            guard rc == 0, address.sin_family == sa_family_t(AF_INET),
                  UInt16(bigEndian: address.sin_port) == port else { continue }
            if shutdown(fd, Int32(SHUT_RDWR)) == 0 { count += 1 }
        }
        return count
    }
}
