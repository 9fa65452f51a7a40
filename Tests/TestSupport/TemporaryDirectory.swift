// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// Makes a fresh directory `/tmp/<prefix>-XXXXXX` (mkdtemp(3)) and returns
/// its path; the one place the test support makes its scratch directories.
public func makeTemporaryDirectory(prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    // The name is read inside the closure: the buffer's pointer is valid only
    // there (read after it, an optimised build reads freed memory).
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
        throw TestSupportError("mkdtemp", String(cString: strerror(errno)))
    }
    return made
}

/// A scratch directory removed with everything in it when the value goes
/// away (a test's state directory shared by several speaker processes).
public final class TemporaryDirectory {
    /// The directory's path.
    public let path: String

    public init(prefix: String) throws { path = try makeTemporaryDirectory(prefix: prefix) }

    deinit { _ = try? runShell("rm -rf '\(path)'", logPath: "/dev/null") }
}
