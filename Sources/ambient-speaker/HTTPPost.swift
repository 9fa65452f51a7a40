// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// One HTTP/1.1 POST of a JSON body to a plain-`http://` endpoint, blocking
/// the calling thread (the poster's own) with every wait bounded by poll(2):
/// the connect, each write and the wait for the status line. Accepted means
/// a 2xx status; anything else is a failure in words (`HTTP 503 Service
/// Unavailable`, `connect: Connection refused`, `no answer within 10 s`).
struct HTTPPost: Sendable {
    var host: String
    var port: Int
    var path: String
    var timeoutMs: Int32 = 10_000

    /// Parses `http://HOST[:PORT][/PATH]`; nil with the reason otherwise
    /// (https needs TLS, which this client does not speak: put a local proxy in front).
    static func parse(_ url: String) -> Result<HTTPPost, HTTPPostError> {
        guard url.hasPrefix("http://") else {
            return .failure(HTTPPostError(url.hasPrefix("https://")
                ? "https is not supported (plain http only; put a TLS proxy in front)" : "expected http://HOST[:PORT]/PATH"))
        }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        var host = String(authority)
        var port = 80
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(p) else {
                return .failure(HTTPPostError("bad port in \"\(authority)\""))
            }
            port = p
            host = String(authority[..<colon])
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !path.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" }) else {
            return .failure(HTTPPostError("expected http://HOST[:PORT]/PATH"))
        }
        return .success(HTTPPost(host: host, port: port, path: path))
    }

    /// Sends `body`; nil when the server answered 2xx, else what failed.
    func send(_ body: [UInt8]) -> String? {
        let fd: Int32
        switch connect() {
        case .failure(let e): return e.reason
        case .success(let s): fd = s
        }
        defer { close(fd) }
        let hostHeader = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let head = "POST \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\nUser-Agent: ambient-speaker-watch\r\n\r\n"
        if let problem = write(fd, Array(head.utf8) + body) { return problem }
        return status(fd)
    }

    private func connect() -> Result<Int32, HTTPPostError> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { return .failure(HTTPPostError("resolve \(host): \(String(cString: gai_strerror(rc)))")) }
        defer { freeaddrinfo(list) }
        var last = "no address for \(host)"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let a = entry {
            entry = a.pointee.ai_next
            let fd = socket(a.pointee.ai_family, a.pointee.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { last = "socket: \(String(cString: strerror(errno)))"; continue }
            if Glibc.connect(fd, a.pointee.ai_addr, a.pointee.ai_addrlen) == 0 { return .success(fd) }
            guard errno == EINPROGRESS else { last = "connect: \(String(cString: strerror(errno)))"; close(fd); continue }
            guard wait(fd, events: Int16(POLLOUT)) else { last = "connect: no answer within \(timeoutMs / 1000) s"; close(fd); continue }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
            if error == 0 { return .success(fd) }
            last = "connect: \(String(cString: strerror(error)))"
            close(fd)
        }
        return .failure(HTTPPostError(last))
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> String? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EINTR) {
                guard wait(fd, events: Int16(POLLOUT)) else { return "send: stalled for \(timeoutMs / 1000) s" }
                continue
            }
            return "send: \(String(cString: strerror(errno)))"
        }
        return nil
    }

    /// Reads up to the status line and judges it.
    private func status(_ fd: Int32) -> String? {
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while !got.contains(UInt8(ascii: "\n")) && got.count < 8192 {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { got += chunk[0..<n]; continue }
            if n == 0 { return got.isEmpty ? "closed without an answer" : "closed within the status line" }
            guard errno == EAGAIN || errno == EINTR else { return "recv: \(String(cString: strerror(errno)))" }
            guard wait(fd, events: Int16(POLLIN)) else { return "no answer within \(timeoutMs / 1000) s" }
        }
        let line = String(decoding: got.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }, as: UTF8.self)
        let parts = line.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]) else {
            return "not an HTTP answer: \"\(line.prefix(80))\""
        }
        return (200...299).contains(code) ? nil : "HTTP \(line.dropFirst(parts[0].count + 1))"
    }

    private func wait(_ fd: Int32, events: Int16) -> Bool {
        var pfd = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let r = poll(&pfd, 1, timeoutMs)
            if r < 0 && errno == EINTR { continue }
            return r > 0
        }
    }
}

/// Why a URL cannot be posted to.
struct HTTPPostError: Error, Sendable {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
