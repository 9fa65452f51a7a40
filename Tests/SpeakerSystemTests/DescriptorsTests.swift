// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// The descriptor helpers adapters use instead of raw syscalls: the eventfd's
/// thread-side wait, non-blocking flags, and the inotify deletion watch.
@Suite struct DescriptorsTests {
    @Test func eventFDWaitAnswersAtOnceWhenSignalledAndFalseWhenNot() throws {
        let wake = try EventFD()
        #expect(wake.wait(timeoutNanos: 0) == false)
        wake.signal()
        wake.signal()
        #expect(wake.wait(timeoutNanos: 0) == true)
        #expect(wake.drain() == 2)
        #expect(wake.wait(timeoutNanos: 0) == false)
    }

    @Test func setNonBlockingAddsTheFlagAndNamesTheCallOnABadDescriptor() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(fcntl(ends[0], F_GETFL) & O_NONBLOCK == 0)
        try Descriptors.setNonBlocking(ends[0])
        #expect(fcntl(ends[0], F_GETFL) & O_NONBLOCK != 0)
        #expect(throws: SystemError(operation: "fcntl(F_GETFL)", errno: EBADF)) { try Descriptors.setNonBlocking(-1) }
    }

    @Test func deletionWatchNamesTheDeletedEntriesAndNothingElse() throws {
        var template = Array("/tmp/tidy-watch-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) } }
        let directory = try #require(made)
        defer { rmdir(directory) }
        for name in ["gpiochip0", "gpiochip-with-a-longer-name"] {
            try FileIO.writeAtomically(path: "\(directory)/\(name)", text: "")
        }
        let watch = try DirectoryDeletionWatch(directory: directory)
        #expect(try watch.deletedNames() == [])  // nothing pending: would block, not an error
        unlink("\(directory)/gpiochip-with-a-longer-name")
        unlink("\(directory)/gpiochip0")
        #expect(try watch.deletedNames() == ["gpiochip-with-a-longer-name", "gpiochip0"])
    }

    @Test func deletionWatchOnAMissingDirectoryThrowsTheAddWatchError() {
        #expect(throws: SystemError(operation: "inotify_add_watch", errno: ENOENT, path: "/nonexistent/tidy")) {
            try DirectoryDeletionWatch(directory: "/nonexistent/tidy")
        }
    }
}
