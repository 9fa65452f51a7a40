// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerSystem

/// A Unix stream socket server that answers newline-terminated text
/// commands, one reply line per command — the simulated board's
/// `board.controlSocket`.
///
/// Binds `path` (removing a stale socket file first; refusing a path that is
/// not a socket or that a live server still answers on), accepts many
/// clients, splits their input into lines (partial reads, CRLF; empty lines
/// are ignored), calls `handler(line)` and writes its reply plus `"\n"`.
/// A line longer than `maxLineBytes` is answered `error: line too long …` and
/// skipped up to its newline. Everything is non-blocking and driven by the
/// ``EventLoop``; a client that stops reading its replies is disconnected.
///
/// Idle clients cannot lock others out: at most `maxClients` are connected;
/// when another arrives, clients silent for `idleTimeoutMilliseconds` are
/// closed, and if all slots are still taken the one silent longest is
/// (told `error: disconnected: …`, best effort). A newcomer is always served.
///
/// Threading: loop thread only (create it there too); `handler` runs on it.
public final class LineServer {
    /// The socket path (removed again by ``close()``).
    public let path: String
    /// The longest accepted command line, in bytes, without its newline.
    public let maxLineBytes: Int

    private let loop: EventLoop
    private let logger: Logger
    private let handler: (String) -> String
    private var listenFD: Int32 = -1
    private var listenRegistration: EventLoop.Registration?
    private var clients: [Int32: Client] = [:]
    /// Most clients connected at once (the one silent longest makes room).
    public let maxClients: Int
    /// A client silent this long is closed when another connects.
    public let idleTimeoutMilliseconds: Int
    private let clock: () -> UInt64
    private let maxPendingOutput = 64 * 1024

    private final class Client {
        let fd: Int32
        /// When it last sent anything (or connected), monotonic ns.
        var lastActive: UInt64 = 0
        var readRegistration: EventLoop.Registration?
        var writeRegistration: EventLoop.Registration?
        var input: [UInt8] = []
        var output: [UInt8] = []
        var skippingLongLine = false
        var closeWhenFlushed = false
        init(fd: Int32) { self.fd = fd }
    }

    /// Binds and listens on `path` and starts accepting on `loop`. Client
    /// idleness is measured on `clock`, by default the loop's own clock.
    /// Throws a ``SystemError`` naming the path if it cannot.
    public init(
        path: String, loop: EventLoop, logger: Logger, maxLineBytes: Int = 1024,
        maxClients: Int = 32, idleTimeoutMilliseconds: Int = 60_000,
        clock: (() -> UInt64)? = nil,
        handler: @escaping (String) -> String
    ) throws(SystemError) {
        self.path = path
        self.maxClients = max(1, maxClients)
        self.idleTimeoutMilliseconds = idleTimeoutMilliseconds
        self.clock = clock ?? { [unowned loop] in loop.now() }
        self.loop = loop
        self.logger = logger
        self.maxLineBytes = maxLineBytes
        self.handler = handler
        var address = try Self.address(for: path)
        try Self.removeStaleSocket(at: path, address: address)
        let fd = try systemCall("socket", path: path) {
            socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
        }
        do throws(SystemError) {
            _ = try systemCall("bind", path: path) {
                withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                    }
                }
            }
            _ = try systemCall("listen", path: path) { listen(fd, 16) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        listenFD = fd
        listenRegistration = loop.addReader(fd: fd) { [unowned self] in self.acceptClients() }
        logger.info("control socket listening on \(path) (max line \(maxLineBytes) bytes, \(self.maxClients) clients, "
                    + "idle ones closed after \(idleTimeoutMilliseconds / 1000) s when another connects)")
    }

    deinit { close() }

    /// Number of connected clients.
    public var clientCount: Int { clients.count }

    /// Disconnects every client, stops listening and removes the socket file.
    /// Idempotent.
    public func close() {
        for fd in Array(clients.keys) { disconnect(fd) }
        if let registration = listenRegistration { loop.remove(registration) }
        listenRegistration = nil
        if listenFD >= 0 {
            Glibc.close(listenFD)
            unlink(path)
            listenFD = -1
        }
    }

    // MARK: Accepting and reading

    private func acceptClients() {
        while true {
            let fd: Int32
            do throws(SystemError) {
                guard let accepted = try systemCallUnlessWouldBlock("accept", path: path, { accept(listenFD, nil, nil) })
                else { return }
                fd = accepted
            } catch {
                logger.warning("control socket: \(error)")
                return
            }
            do throws(SystemError) {
                try Descriptors.setCloseOnExec(fd)
                try Descriptors.setNonBlocking(fd)
            } catch {
                logger.warning("control socket: client \(fd) refused: \(error)")
                Glibc.close(fd)
                continue
            }
            makeRoom()
            let client = Client(fd: fd)
            client.lastActive = clock()
            clients[fd] = client
            client.readRegistration = loop.addReader(fd: fd) { [unowned self] in self.readFrom(fd) }
            logger.debug("control socket: client \(fd) connected")
        }
    }

    /// Before accepting one more: closes clients idle past the timeout, then,
    /// if every slot is still taken, the one silent longest.
    private func makeRoom() {
        let now = clock()
        let limit = UInt64(max(0, idleTimeoutMilliseconds)) * 1_000_000
        for client in clients.values where now &- client.lastActive >= limit && client.output.isEmpty {
            logger.debug("control socket: client \(client.fd) idle for \((now &- client.lastActive) / 1_000_000) ms; closing it")
            disconnect(client.fd)
        }
        guard clients.count >= maxClients,
              let oldest = clients.values.min(by: { $0.lastActive < $1.lastActive }) else { return }
        logger.notice("control socket: \(maxClients) clients connected; closing client \(oldest.fd), silent longest, "
                      + "to serve a new one")
        let farewell = Array("error: disconnected: too many clients (\(maxClients)); you were silent longest\n".utf8)
        _ = farewell.withUnsafeBytes { Glibc.send(oldest.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        disconnect(oldest.fd)
    }

    private func readFrom(_ fd: Int32) {
        guard let client = clients[fd] else { return }
        client.lastActive = clock()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while clients[fd] != nil {
            let got: Int?
            do {
                got = try systemCallUnlessWouldBlock("read", path: path) {
                    chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                }
            } catch {
                logger.debug("control socket: client \(fd): \(error)")
                disconnect(fd)
                return
            }
            guard let got else { return }
            if got == 0 {
                // EOF: answer a last unterminated line, then close after the flush.
                if !client.input.isEmpty && !client.skippingLongLine { respond(to: client.input, for: client) }
                client.input.removeAll()
                if let registration = client.readRegistration { loop.remove(registration) }
                client.readRegistration = nil
                client.closeWhenFlushed = true
                flush(client)
                return
            }
            client.input.append(contentsOf: chunk[0..<got])
            processLines(of: client)
        }
    }

    private func processLines(of client: Client) {
        var start = 0
        let input = client.input
        while let newline = input[start...].firstIndex(of: UInt8(ascii: "\n")) {
            if client.skippingLongLine {
                client.skippingLongLine = false
            } else if newline - start - (newline > start && input[newline - 1] == UInt8(ascii: "\r") ? 1 : 0) > maxLineBytes {
                send("error: line too long (over \(maxLineBytes) bytes)", to: client)
            } else {
                respond(to: input[start..<newline], for: client)
            }
            start = newline + 1
            if clients[client.fd] == nil { return }
        }
        client.input.removeFirst(start)
        if !client.skippingLongLine && client.input.count > maxLineBytes + 1 {
            send("error: line too long (over \(maxLineBytes) bytes)", to: client)
            client.skippingLongLine = true
        }
        if client.skippingLongLine { client.input.removeAll() }
    }

    private func respond(to bytes: some Collection<UInt8>, for client: Client) {
        var line = Array(bytes)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        let text = String(decoding: line, as: UTF8.self)
        guard !text.allSatisfy(\.isWhitespace) else { return }
        send(handler(text), to: client)
    }

    // MARK: Writing

    private func send(_ reply: String, to client: Client) {
        client.output.append(contentsOf: reply.utf8)
        client.output.append(UInt8(ascii: "\n"))
        if client.output.count > maxPendingOutput {
            logger.warning("control socket: client \(client.fd) is not reading its replies; disconnecting")
            disconnect(client.fd)
            return
        }
        flush(client)
    }

    private func flush(_ client: Client) {
        let fd = client.fd
        while !client.output.isEmpty {
            let sent: Int?
            do {
                sent = try systemCallUnlessWouldBlock("send", path: path) {
                    client.output.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                }
            } catch {
                logger.debug("control socket: client \(fd): \(error)")
                disconnect(fd)
                return
            }
            guard let sent else {
                if client.writeRegistration == nil {
                    client.writeRegistration = loop.addWriter(fd: fd) { [unowned self] in
                        if let client = self.clients[fd] { self.flush(client) }
                    }
                }
                return
            }
            client.output.removeFirst(sent)
        }
        if let registration = client.writeRegistration { loop.remove(registration) }
        client.writeRegistration = nil
        if client.closeWhenFlushed { disconnect(fd) }
    }

    private func disconnect(_ fd: Int32) {
        guard let client = clients.removeValue(forKey: fd) else { return }
        if let registration = client.readRegistration { loop.remove(registration) }
        if let registration = client.writeRegistration { loop.remove(registration) }
        Glibc.close(fd)
        logger.debug("control socket: client \(fd) disconnected")
    }

    // MARK: Socket path

    /// A `sockaddr_un` for `path`; `ENAMETOOLONG` if it does not fit.
    static func address(for path: String) throws(SystemError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw SystemError(operation: "bind (socket path must be 1–\(capacity - 1) bytes)", errno: ENAMETOOLONG, path: path)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    /// Removes a socket file left by a previous run. Refuses a path that is
    /// not a socket (`ENOTSOCK`) or one a live server answers on (`EADDRINUSE`).
    private static func removeStaleSocket(at path: String, address: sockaddr_un) throws(SystemError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }  // nothing there
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw SystemError(operation: "bind (path exists and is not a socket)", errno: ENOTSOCK, path: path)
        }
        let probe = try systemCall("socket", path: path) { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0) }
        defer { Glibc.close(probe) }
        var address = address
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(probe, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if connected == 0 {
            throw SystemError(operation: "bind (another server is listening)", errno: EADDRINUSE, path: path)
        }
        _ = try systemCall("unlink", path: path) { unlink(path) }
    }
}
