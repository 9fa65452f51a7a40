// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerSystem

@Suite struct FileIOTests {
    /// A fresh directory under /tmp (mkdtemp).
    private func temporaryDirectory() throws -> String {
        var template = Array("/tmp/speaker-fileio-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
            throw SystemError(operation: "mkdtemp", errno: errno)
        }
        return made
    }

    private func entries(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    @Test func atomicWriteRoundTripsAndReplacesWithoutLeftovers() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/state.json"
        defer { unlink(path); rmdir(directory) }
        try FileIO.writeAtomically(path: path, text: "{\"level\":0.4}")
        #expect(try FileIO.readText(path: path) == "{\"level\":0.4}")
        let binary = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try FileIO.writeAtomically(path: path, bytes: binary, mode: 0o600)
        #expect(try FileIO.read(path: path) == binary)
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & 0o777 == 0o600)
        #expect(entries(of: directory) == ["state.json"], "no temporary file is left behind")
    }

    @Test func errorsNameThePath() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/big"
        defer { unlink(path); rmdir(directory) }
        #expect(throws: SystemError(operation: "open", errno: ENOENT, path: directory + "/missing")) {
            _ = try FileIO.read(path: directory + "/missing")
        }
        try FileIO.writeAtomically(path: path, bytes: [UInt8](repeating: 7, count: 100))
        do {
            _ = try FileIO.read(path: path, maxBytes: 99)
            Issue.record("expected EFBIG")
        } catch {
            #expect(error.errno == EFBIG && error.path == path)
        }
        #expect(throws: SystemError.self) {
            try FileIO.writeAtomically(path: directory + "/no/such/dir/file", text: "x")
        }
        #expect(try FileIO.read(path: "/dev/urandom", exactly: 16).count == 16)
    }

    /// A FIFO (or any non-regular file) where a config or
    /// state file should be is refused at once, never waited on.
    @Test func nonRegularFilesAreRefusedWithoutBlocking() throws {
        let directory = try temporaryDirectory()
        let fifo = directory + "/state.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let socketPath = directory + "/sock"
        let sock = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(sock) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in socketPath.utf8.enumerated() { raw[i] = b }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        try FileIO.writeAtomically(path: directory + "/real", text: "42\n")
        #expect(symlink(directory + "/real", directory + "/link") == 0)

        let cases: [(String, String)] = [(fifo, "FIFO"), (directory, "directory"), ("/dev/zero", "character device")]
        for (path, kind) in cases {
            do {
                _ = try FileIO.read(path: path, maxBytes: 64)
                Issue.record("\(path) was read")
            } catch {
                #expect(error.errno == EINVAL && error.message == "refused: a \(kind), not a regular file", "\(error)")
                #expect(error.description.contains(path))
            }
        }
        #expect(throws: SystemError.self) { try FileIO.read(path: socketPath) }  // ENXIO: a socket cannot be opened
        #expect(try FileIO.readText(path: directory + "/link") == "42\n", "symbolic links are followed by default")
        do {
            _ = try FileIO.read(path: directory + "/link", followSymlinks: false)
            Issue.record("a symbolic link was followed")
        } catch {
            #expect(error.errno == ELOOP)
        }
        #expect(throws: SystemError.self) { try FileIO.read(path: directory + "/real", maxBytes: 2) }
    }
}
