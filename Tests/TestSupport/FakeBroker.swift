// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP "broker" that answers each client with bytes chosen by the
/// test — malformed CONNACKs, truncated packets, silence — to see what the
/// client does with a hostile or broken broker. One thread serves one
/// connection at a time: it reads the client's CONNECT, writes the reply,
/// half-closes (so a client waiting for the rest of a truncated packet sees
/// EOF instead of waiting for its keepalive), and waits up to `lingerSeconds`
/// for the client to close. `stop()` or deinit ends it.
public final class FakeBroker: @unchecked Sendable {
    /// What to do with one connection, given its index (0-based) and the
    /// client's CONNECT packet (empty if it sent none).
    public enum Reply: Sendable {
        /// Write these bytes, half-close, wait for the client to close.
        case send([UInt8])
        /// Write nothing and keep the connection open until the client closes
        /// it (a broker that never answers: the client's keepalive decides).
        case silence
    }

    /// What the broker saw; read through `counts`.
    public struct Counts: Sendable, Equatable {
        /// Connections accepted.
        public var connections = 0
        /// Replies written in full.
        public var replies = 0
        /// Connections the client did not close within `lingerSeconds` after a reply.
        public var clientsThatLingered = 0
    }

    /// The loopback port clients connect to.
    public let port: UInt16
    private let listener: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let lingerSeconds: Double
    private let respond: @Sendable (Int, [UInt8]) -> Reply
    private let state = Monitor(Counts())
    private var thread: pthread_t?

    /// Listens on a free loopback port; `respond` runs on the broker's thread.
    public init(lingerSeconds: Double = 5, respond: @escaping @Sendable (Int, [UInt8]) -> Reply) throws {
        self.lingerSeconds = lingerSeconds
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket", String(cString: strerror(errno))) }
        var address = FreePort.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
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
        guard pipe(&fds) == 0 else { throw TestSupportError("pipe", String(cString: strerror(errno))) }
        stopPipe = (fds[0], fds[1])
        var t = pthread_t()
        guard pthread_create(&t, nil, fakeBrokerThreadMain, Unmanaged.passUnretained(self).toOpaque()) == 0 else {
            throw TestSupportError("pthread_create", "failed")
        }
        thread = t
    }

    deinit { stop() }

    /// A snapshot of the counts. Any thread.
    public var counts: Counts { state.read { $0 } }

    /// Waits until `connections` reaches `count`; false on timeout. Any thread.
    public func waitForConnections(_ count: Int, timeout: Double) -> Bool {
        state.wait(timeout: timeout) { $0.connections >= count ? true : nil } ?? false
    }

    /// Stops the thread and closes the listener. Idempotent.
    public func stop() {
        guard let t = thread else { return }
        thread = nil
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        pthread_join(t, nil)
        close(listener)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Serves connections one after another until stopped. Broker thread.
    fileprivate func run() {
        var index = 0
        while let client = acceptNext() {
            state.update { $0.connections += 1 }
            let connect = readPacket(client, timeout: 2)
            switch respond(index, connect) {
            case .send(let bytes):
                if writeAll(client, bytes) { state.update { $0.replies += 1 } }
                shutdown(client, Int32(SHUT_WR))
                if !waitForClose(client, timeout: lingerSeconds) { state.update { $0.clientsThatLingered += 1 } }
            case .silence:
                _ = waitForClose(client, timeout: 3600)
            }
            close(client)
            index += 1
        }
    }

    /// The next client, or nil once stopped.
    private func acceptNext() -> Int32? {
        while true {
            var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            if poll(&fds, 2, -1) < 0 { if errno == EINTR { continue } else { return nil } }
            if fds[1].revents != 0 { return nil }
            let fd = accept(listener, nil, nil)
            if fd >= 0 { return fd }
        }
    }

    /// Waits for `fd` (or the stop pipe) to become readable; false on timeout or stop.
    private func readable(_ fd: Int32, deadline: UInt64) -> Bool {
        while true {
            let now = Monotonic.nanoseconds()
            guard now < deadline else { return false }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0)]
            let ms = Int32(min(UInt64(Int32.max), (deadline - now) / 1_000_000 + 1))
            let n = poll(&fds, 2, ms)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || fds[1].revents != 0 { return false }
            return true
        }
    }

    /// Reads one MQTT packet (fixed header, remaining length, body); what
    /// arrived if the client stops early.
    private func readPacket(_ fd: Int32, timeout: Double) -> [UInt8] {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        var bytes: [UInt8] = []
        var needed = 2
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < needed {
            guard readable(fd, deadline: deadline) else { return bytes }
            let n = read(fd, &buffer, min(buffer.count, needed - bytes.count))
            if n <= 0 { return bytes }
            bytes += buffer[0..<n]
            if bytes.count >= 2 {
                var length = 0
                var shift = 0
                var index = 1
                while index < bytes.count && index <= 4 {
                    length |= Int(bytes[index] & 0x7F) << shift
                    if bytes[index] & 0x80 == 0 { needed = index + 1 + length; break }
                    shift += 7
                    index += 1
                    needed = max(needed, index + 1)
                }
            }
        }
        return bytes
    }

    /// Reads and discards until EOF; false if the client is still open at the timeout.
    private func waitForClose(_ fd: Int32, timeout: Double) -> Bool {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while readable(fd, deadline: deadline) {
            if read(fd, &buffer, buffer.count) <= 0 { return true }
        }
        return false
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

/// pthread entry point of the fake broker's thread; `context` is an unretained `FakeBroker`
/// (its `stop()`, called by deinit at the latest, joins this thread first).
private func fakeBrokerThreadMain(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let context else { return nil }
    Unmanaged<FakeBroker>.fromOpaque(context).takeUnretainedValue().run()
    return nil
}
