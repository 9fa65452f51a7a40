// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerSystem
import Board

/// A real Unix-socket client talking to a real ``LineServer``, all on one
/// EventLoop (the client's writes are timers, its reads a reader).
@Suite struct LineServerTests {
    private func socketPath() -> String {
        "/tmp/speaker-linesrv-\(getpid())-\(randomBytes(4).map { String($0, radix: 16) }.joined()).sock"
    }

    private let logger = Logger(component: "test", threshold: .debug, backend: MemoryLogBackend())

    /// A connected, non-blocking client socket.
    private func connectClient(to path: String) throws -> Int32 {
        let fd = try systemCall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = try systemCall("connect") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    private func write(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Runs the loop in short turns until `condition` holds (or 30 s, a hang
    /// guard: a loaded or emulated host may take far longer than a real one).
    private func runUntil(_ loop: EventLoop, _ condition: () -> Bool) throws {
        let deadline = MonotonicClock.now() + 30_000_000_000
        while !condition() && MonotonicClock.now() < deadline {
            loop.schedule(after: 5) { loop.stop() }
            try loop.run()
        }
    }

    /// Runs the loop until `expected` reply lines arrived on `client` (or 30 s).
    private func collectReplies(_ loop: EventLoop, client: Int32, expected: Int) throws -> [String] {
        var replies: [String] = []
        var partial: [UInt8] = []
        let registration = loop.addReader(fd: client) {
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { read(client, $0.baseAddress, $0.count) }
            guard n > 0 else { loop.stop(); return }
            for byte in buffer[0..<n] {
                if byte == UInt8(ascii: "\n") {
                    replies.append(String(decoding: partial, as: UTF8.self))
                    partial.removeAll()
                } else {
                    partial.append(byte)
                }
            }
            if replies.count >= expected { loop.stop() }
        }
        let guardTimer = loop.schedule(after: 30_000) { replies.append("<timeout>"); loop.stop() }
        try loop.run()
        loop.remove(registration)
        loop.cancel(guardTimer)
        return replies
    }

    @Test func answersEachLineIncludingBatchedSplitAndCRLF() throws {
        let loop = try EventLoop()
        let path = socketPath()
        let server = try LineServer(path: path, loop: loop, logger: logger) { "echo:\($0)" }
        let client = try connectClient(to: path)
        defer { close(client) }
        // Several lines in one write, then one line split over two writes.
        write("press playPause\npulses\r\n\nhel", to: client)
        loop.schedule(after: 10) { self.write("lo world\n", to: client) }
        let replies = try collectReplies(loop, client: client, expected: 3)
        #expect(replies == ["echo:press playPause", "echo:pulses", "echo:hello world"])
        #expect(server.clientCount == 1)

        // A second client is served independently.
        let other = try connectClient(to: path)
        defer { close(other) }
        write("second\n", to: other)
        #expect(try collectReplies(loop, client: other, expected: 1) == ["echo:second"])
        server.close()
        #expect(access(path, F_OK) != 0, "close() removes the socket file")
    }

    @Test func overLongLinesGetAnErrorAndTheNextLineStillWorks() throws {
        let loop = try EventLoop()
        let path = socketPath()
        let server = try LineServer(path: path, loop: loop, logger: logger, maxLineBytes: 1024) { "echo:\($0)" }
        defer { server.close() }
        let client = try connectClient(to: path)
        defer { close(client) }
        let exact = String(repeating: "y", count: 1024)
        write(String(repeating: "x", count: 2000) + "\nafter\n" + exact + "\r\n", to: client)
        // An over-long line arriving in pieces gets one error only.
        loop.schedule(after: 5) { self.write(String(repeating: "z", count: 1500), to: client) }
        loop.schedule(after: 10) { self.write(String(repeating: "z", count: 600) + "\nok2\n", to: client) }
        let replies = try collectReplies(loop, client: client, expected: 5)
        #expect(replies == [
            "error: line too long (over 1024 bytes)", "echo:after", "echo:\(exact)",
            "error: line too long (over 1024 bytes)", "echo:ok2",
        ])
    }

    @Test func replacesAStaleSocketButRefusesOtherFilesAndLiveServers() throws {
        let loop = try EventLoop()
        let path = socketPath()
        // A stale socket file: bound, then its process "died" without unlinking.
        let stale = try systemCall("socket") { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = try systemCall("bind") {
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
        }
        close(stale)
        #expect(access(path, F_OK) == 0)
        let server = try LineServer(path: path, loop: loop, logger: logger) { _ in "ok" }

        // A live server at the same path is not stolen.
        #expect(throws: SystemError(operation: "bind (another server is listening)", errno: EADDRINUSE, path: path)) {
            _ = try LineServer(path: path, loop: loop, logger: logger) { _ in "ok" }
        }
        server.close()

        // A regular file is never removed.
        let file = socketPath() + ".txt"
        try FileIO.writeAtomically(path: file, text: "keep me")
        defer { unlink(file) }
        #expect(throws: SystemError(operation: "bind (path exists and is not a socket)", errno: ENOTSOCK, path: file)) {
            _ = try LineServer(path: file, loop: loop, logger: logger) { _ in "ok" }
        }
        #expect(try FileIO.readText(path: file) == "keep me")
    }

    /// Reads what has arrived on a non-blocking client: the text, and
    /// whether the server closed it (EOF or reset).
    private func drain(_ fd: Int32) -> (text: String, closed: Bool) {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 { out += buffer[0..<n]; continue }
            return (String(decoding: out, as: UTF8.self), n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
        }
    }

    /// 32 idle clients cannot lock everyone out: the one silent longest makes room.
    @Test func idleClientsCannotLockOthersOutTheOneSilentLongestMakesRoom() throws {
        let loop = try EventLoop()
        let path = socketPath()
        let server = try LineServer(path: path, loop: loop, logger: logger) { "echo:\($0)" }
        var idle: [Int32] = []
        for count in 1...32 {
            idle.append(try connectClient(to: path))
            try runUntil(loop) { server.clientCount == count }  // accepted
        }
        defer { idle.forEach { close($0) } }
        #expect(server.clientCount == 32)
        let newcomer = try connectClient(to: path)
        defer { close(newcomer) }
        write("ping\n", to: newcomer)
        #expect(try collectReplies(loop, client: newcomer, expected: 1) == ["echo:ping"])
        #expect(server.clientCount == 32)
        let evicted = drain(idle[0])
        #expect(evicted.closed && evicted.text.hasPrefix("error: disconnected: too many clients (32)"), "\(evicted)")
        #expect(!drain(idle[1]).closed, "only the one silent longest")
    }

    @Test func clientsIdlePastTheTimeoutAreClosedWhenAnotherConnects() throws {
        let loop = try EventLoop()
        let path = socketPath()
        let now = ManualNanoseconds()
        let server = try LineServer(path: path, loop: loop, logger: logger, idleTimeoutMilliseconds: 60_000,
                                    clock: { now.value }) { "echo:\($0)" }
        let old = try connectClient(to: path)
        defer { close(old) }
        write("hello\n", to: old)
        #expect(try collectReplies(loop, client: old, expected: 1) == ["echo:hello"])
        now.value += 59_000_000_000
        let second = try connectClient(to: path)
        defer { close(second) }
        write("a\n", to: second)
        #expect(try collectReplies(loop, client: second, expected: 1) == ["echo:a"])
        #expect(server.clientCount == 2, "59 s idle: kept")
        now.value += 2_000_000_000
        let third = try connectClient(to: path)
        defer { close(third) }
        write("b\n", to: third)
        #expect(try collectReplies(loop, client: third, expected: 1) == ["echo:b"])
        #expect(server.clientCount == 2, "61 s idle: closed; the second (2 s) kept")
        #expect(drain(old).closed)
    }
}

/// A clock the test moves by hand (loop thread only).
final class ManualNanoseconds: @unchecked Sendable {
    var value: UInt64 = 1_000_000_000
}
