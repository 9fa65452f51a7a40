// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for the
/// `watch --post` tests: it answers the first requests with the failures
/// it is given, in order (`503`: a 503 status; `close`: the connection
/// closed before any answer), and every later one with 204, keeping the
/// bodies of the accepted requests in order. One thread of its own.
final class FlakyHTTPServer: Sendable {
    enum Failure: Sendable { case status503, close }

    let port: UInt16
    private let listener: Int32
    private let failures: [Failure]
    private let state = Mutex<(requests: Int, accepted: [String])>((0, []))
    private let arrived: EventFD
    private let thread: Mutex<OSThread?> = Mutex(nil)

    init(failures: [Failure]) throws {
        self.failures = failures
        arrived = try EventFD()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) == 0 && getsockname(fd, $0, &size) == 0 }
        }
        guard bound, listen(fd, 16) == 0 else {
            close(fd)
            throw SystemError(operation: "bind/listen", errno: errno)
        }
        listener = fd
        port = UInt16(bigEndian: addr.sin_port)
        let started = try OSThread.start(name: "http-test") { [self] _ in serve() }
        thread.withLock { $0 = started }
    }

    deinit { close(listener) }

    /// Stops accepting and joins the thread.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        thread.withLock { $0?.join(); $0 = nil }
    }

    var requests: Int { state.withLock { $0.requests } }
    var accepted: [String] { state.withLock { $0.accepted } }

    /// Waits (woken by each request, no polling) until `check` holds or `timeout` seconds pass.
    func wait(timeout: Double, until check: (FlakyHTTPServer) -> Bool) -> Bool {
        let end = MonotonicClock.now() + UInt64(timeout * 1e9)
        while !check(self) {
            let now = MonotonicClock.now()
            guard now < end else { return false }
            _ = arrived.wait(timeoutNanos: Int64(end - now))
            arrived.drain()
        }
        return true
    }

    private func serve() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 { if errno == EINTR { continue } else { return } }
            handle(fd)
            close(fd)
            arrived.signal()
        }
    }

    private func handle(_ fd: Int32) {
        guard let body = readRequest(fd) else { return }
        let n = state.withLock { s -> Int in s.requests += 1; return s.requests }
        let failure = n <= failures.count ? failures[n - 1] : nil
        switch failure {
        case .close?: return
        case .status503?: reply(fd, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        case nil:
            state.withLock { $0.accepted.append(body) }
            reply(fd, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        }
    }

    /// The request's body (by Content-Length), or nil when it is not a POST.
    private func readRequest(_ fd: Int32) -> String? {
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        var length = 0
        while true {
            if headerEnd == nil, let r = find(end, in: got) {
                headerEnd = r + 4
                let head = String(decoding: got[..<r], as: UTF8.self)
                guard head.hasPrefix("POST ") else { return nil }
                for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
                    length = Int(line.dropFirst("content-length:".count).trimmingCharacters()) ?? 0
                }
            }
            if let h = headerEnd, got.count >= h + length { return String(decoding: got[h..<(h + length)], as: UTF8.self) }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return nil }
            got += chunk[0..<n]
        }
    }

    private func find(_ needle: [UInt8], in hay: [UInt8]) -> Int? {
        guard hay.count >= needle.count else { return nil }
        return (0...(hay.count - needle.count)).first { Array(hay[$0..<($0 + needle.count)]) == needle }
    }

    private func reply(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }
}

private extension Substring {
    func trimmingCharacters() -> String { String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }
}
