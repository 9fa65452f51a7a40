// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerSystem

@Suite struct SystemdNotifierTests {
    @Test func sendsDatagramsToTheNotifySocket() throws {
        let path = "/tmp/speaker-notify-\(getpid())-\(randomBytes(4).map { String($0, radix: 16) }.joined())"
        let receiver = try systemCall("socket") { socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0) }
        defer { close(receiver); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = try systemCall("bind") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        let notifier = try SystemdNotifier(socketPath: path)
        try notifier.notify("READY=1\nSTATUS=idle")
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = try systemCall("recv") { buffer.withUnsafeMutableBytes { recv(receiver, $0.baseAddress, $0.count, 0) } }
        #expect(String(decoding: buffer[0..<n], as: UTF8.self) == "READY=1\nSTATUS=idle")
        #expect(throws: SystemError.self) { try SystemdNotifier(socketPath: path + "-missing").notify("X=1") }
    }
}
