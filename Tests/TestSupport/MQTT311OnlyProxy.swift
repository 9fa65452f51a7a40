// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy in front of a `TestBroker` that behaves like a broker which
/// only speaks MQTT 3.1.1: it reads each client's CONNECT, answers a v5
/// CONNECT (protocol level 5) with the 3.1.1 CONNACK "unacceptable protocol
/// version" (`20 02 00 01`; or any other `v5Reply`, to play a broken v5
/// broker) and closes, and forwards every other connection byte for byte to
/// the real broker. One thread runs a poll loop over all
/// sockets; `stop()` or deinit ends it (the thread holds no reference, so
/// deinit joins it before the proxy is freed).
public final class MQTT311OnlyProxy: @unchecked Sendable {
    /// Counts of what the proxy saw; read through `counts`.
    public struct Counts: Sendable, Equatable {
        public var refusedV5 = 0
        public var forwarded = 0
    }

    /// The loopback port clients connect to.
    public let port: UInt16
    private let upstreamPort: UInt16
    private let v5Reply: [UInt8]
    private let listener: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let state = Monitor(Counts())
    private var thread: pthread_t?

    /// Listens on a free loopback port and forwards to `upstreamPort`;
    /// answers a v5 CONNECT with `v5Reply`.
    public init(upstreamPort: UInt16, v5Reply: [UInt8] = [0x20, 0x02, 0x00, 0x01]) throws {
        self.upstreamPort = upstreamPort
        self.v5Reply = v5Reply
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket", String(cString: strerror(errno))) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = FreePort.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 16) == 0 else {
            close(fd)
            throw TestSupportError("bind/listen", String(cString: strerror(errno)))
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw TestSupportError("pipe2", String(cString: strerror(errno))) }
        stopPipe = (fds[0], fds[1])
        var t = pthread_t()
        let context = Unmanaged.passUnretained(self).toOpaque()
        guard pthread_create(&t, nil, proxyThreadMain, context) == 0 else {
            throw TestSupportError("pthread_create", "failed")
        }
        thread = t
    }

    deinit { stop() }

    /// What the proxy has seen so far.
    public var counts: Counts { state.read { $0 } }

    /// Stops the loop and closes every socket.
    public func stop() {
        guard let t = thread else { return }
        thread = nil
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        pthread_join(t, nil)
    }

    /// The poll loop: accept, sniff the CONNECT, refuse v5 or pair with upstream, pump bytes.
    fileprivate func run() {
        var pending: [Int32: [UInt8]] = [:]      // client fd -> bytes read before the CONNECT was complete
        var peers: [Int32: Int32] = [:]           // forwarding pairs, both directions
        defer {
            for fd in Set(pending.keys).union(peers.keys) { close(fd) }
            close(listener)
            close(stopPipe.read)
            close(stopPipe.write)
        }
        while true {
            var entries = [pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            entries += (Array(pending.keys) + Array(peers.keys)).map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&entries, nfds_t(entries.count), 1000) >= 0 || errno == EINTR else { return }
            if entries[0].revents != 0 { return }
            if entries[1].revents != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 { pending[client] = [] }
            }
            // A pair's two ends may both be ready: the second was closed with the
            // first, and its number may already belong to a descriptor another
            // thread of this process opened since (the link's next socket).
            var closed = Set<Int32>()
            for entry in entries.dropFirst(2) where entry.revents != 0 && !closed.contains(entry.fd) {
                let fd = entry.fd
                var buffer = [UInt8](repeating: 0, count: 65536)
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 {
                    if let other = peers.removeValue(forKey: fd) {
                        peers.removeValue(forKey: other)
                        close(other)
                        closed.insert(other)
                    }
                    pending.removeValue(forKey: fd)
                    close(fd)
                    continue
                }
                let bytes = Array(buffer[0..<n])
                if let other = peers[fd] {
                    writeAll(other, bytes)
                } else if pending[fd] != nil {
                    pending[fd]! += bytes
                    guard let level = Self.protocolLevel(pending[fd]!) else { continue }
                    let seen = pending.removeValue(forKey: fd) ?? []
                    if level == 5 {
                        state.update { $0.refusedV5 += 1 }  // counted before the client can see the reply
                        writeAll(fd, v5Reply)
                        close(fd)
                    } else if let upstream = connectUpstream() {
                        writeAll(upstream, seen)
                        peers[fd] = upstream
                        peers[upstream] = fd
                        state.update { $0.forwarded += 1 }
                    } else {
                        close(fd)
                    }
                }
            }
        }
    }

    /// The protocol level byte of a CONNECT once enough bytes are there:
    /// fixed header, remaining length (varint), protocol name, level.
    static func protocolLevel(_ b: [UInt8]) -> UInt8? {
        guard b.count >= 2, b[0] == 0x10 else { return b.isEmpty ? nil : 0 }
        var index = 1
        while index < b.count && b[index] & 0x80 != 0 && index < 5 { index += 1 }
        index += 1                                  // past the varint
        guard b.count >= index + 2 else { return nil }
        let nameLength = Int(b[index]) << 8 | Int(b[index + 1])
        let levelIndex = index + 2 + nameLength
        return b.count > levelIndex ? b[levelIndex] : nil
    }

    private func connectUpstream() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = FreePort.loopback(port: upstreamPort)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if rc != 0 { close(fd); return nil }
        return fd
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

private func proxyThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<MQTT311OnlyProxy>.fromOpaque(context).takeUnretainedValue().run()
    return nil
}
