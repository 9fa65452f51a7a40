// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: the operation (the C function, e.g. `"timerfd_settime"`),
/// the `errno` it left, and optionally the path it worked on.
///
/// A plain value; safe to pass between threads.
public struct SystemError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The C function (or short operation name) that failed.
    public var operation: String
    /// The `errno` value the call left.
    public var errno: Int32
    /// The file or socket path involved, when there is one.
    public var path: String?
    /// Words that say more than `errno` can (e.g. "a FIFO, not a regular
    /// file" for a refusal reported as `EINVAL`); replaces `strerror` in `message`.
    public var detail: String?

    /// Creates an error for `operation` that failed with `errno` (on `path`).
    public init(operation: String, errno: Int32, path: String? = nil, detail: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.path = path
        self.detail = detail
    }

    /// `detail`, else the C library's text for `errno` (`strerror(3)`).
    public var message: String { detail ?? String(cString: strerror(errno)) }

    /// True for `EAGAIN`/`EWOULDBLOCK`: a non-blocking call found nothing to do.
    public var isWouldBlock: Bool { errno == EAGAIN || errno == EWOULDBLOCK }

    /// `operation(path): message (errno N)`, e.g. `open(/etc/x): No such file or directory (errno 2)`.
    public var description: String {
        let target = path.map { "(\($0))" } ?? ""
        return "\(operation)\(target): \(message) (errno \(errno))"
    }

    /// This error with `path` attached (keeps an existing path).
    public func on(path: String) -> SystemError {
        SystemError(operation: operation, errno: errno, path: self.path ?? path, detail: detail)
    }
}

/// The one funnel every system call in SpeakerSystem goes through: runs
/// `body`, retries while it fails with `EINTR`, and turns `-1` into a thrown
/// ``SystemError`` carrying `errno` and `operation`.
///
/// Callable from any thread; `body` runs on the caller's.
@inlinable
public func systemCall<Result: FixedWidthInteger>(
    _ operation: String, path: String? = nil, _ body: () -> Result
) throws(SystemError) -> Result {
    while true {
        let result = body()
        if result != -1 { return result }
        let code = errno
        if code == EINTR { continue }
        throw SystemError(operation: operation, errno: code, path: path)
    }
}

/// Like ``systemCall(_:path:_:)`` but answers `nil` instead of throwing when
/// a non-blocking call would block (`EAGAIN`/`EWOULDBLOCK`).
@inlinable
public func systemCallUnlessWouldBlock<Result: FixedWidthInteger>(
    _ operation: String, path: String? = nil, _ body: () -> Result
) throws(SystemError) -> Result? {
    do {
        return try systemCall(operation, path: path, body)
    } catch {
        if error.isWouldBlock { return nil }
        throw error
    }
}
