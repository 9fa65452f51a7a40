// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import AudioALSA
import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// The audio thread's wait for room (`DeviceWait`): one poll over the
/// device's descriptors and the request eventfd. A pipe nobody writes stands
/// for a full device (never ready) and one with a byte in it for a device
/// with room; alsa-lib's `null` and `file` pcms are the real descriptors
/// (card-less pcms always have room). No outcome here depends on a time:
/// the timeouts only bound a broken wait.
@Suite struct DeviceWaitTests {
    /// A pipe: (read end, write end), closed by the caller.
    static func pipeEnds() throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        return (ends[0], ends[1])
    }

    @Test func aRequestWakesAWaitOnAFullDevice() throws {
        let (full, writer) = try Self.pipeEnds()
        defer { close(full); close(writer) }
        let wake = try EventFD()
        let wait = DeviceWait(descriptors: [pollfd(fd: full, events: Int16(POLLIN), revents: 0)])
        wake.signal()
        #expect(wait.wait(wake: wake.fd, timeoutNanos: 10_000_000_000) == .request)
        // Not drained by the wait: the audio thread drains as it takes the requests.
        #expect(wake.drain() == 1)
    }

    @Test func aRequestFromAnotherThreadWakesAWaitWithoutALimit() throws {
        let (full, writer) = try Self.pipeEnds()
        defer { close(full); close(writer) }
        let wake = try EventFD()
        let wait = DeviceWait(descriptors: [pollfd(fd: full, events: Int16(POLLIN), revents: 0)])
        let signaller = try OSThread.start(name: "signaller", realtimePriority: nil) { _ in wake.signal() }
        // Without the eventfd in the poll set this would never return (the pipe stays empty).
        #expect(wait.wait(wake: wake.fd, timeoutNanos: -1) == .request)
        signaller.join()
    }

    @Test func roomEndsTheWaitAndARequestWinsOverRoom() throws {
        let (ready, writer) = try Self.pipeEnds()
        defer { close(ready); close(writer) }
        var byte: UInt8 = 1
        try #require(write(writer, &byte, 1) == 1)
        let wake = try EventFD()
        let wait = DeviceWait(descriptors: [pollfd(fd: ready, events: Int16(POLLIN), revents: 0)])
        #expect(wait.wait(wake: wake.fd, timeoutNanos: 10_000_000_000) == .room)
        wake.signal()
        #expect(wait.wait(wake: wake.fd, timeoutNanos: 10_000_000_000) == .request)
    }

    @Test func neitherRoomNorARequestTimesOut() throws {
        let (full, writer) = try Self.pipeEnds()
        defer { close(full); close(writer) }
        let wake = try EventFD()
        let wait = DeviceWait(descriptors: [pollfd(fd: full, events: Int16(POLLIN), revents: 0)])
        #expect(wait.wait(wake: wake.fd, timeoutNanos: 1_000_000) == .timeout)
    }

    @Test func aPCMsOwnDescriptorsArePolledWithTheWake() throws {
        let pcm = try ALSAPlayback(device: "null", sampleRate: 48_000, periodFrames: 1024, bufferFrames: 4096)
        defer { pcm.close() }
        let wake = try EventFD()
        // alsa-lib's null pcm always has room (its descriptor is /dev/null's).
        #expect(pcm.waitForRoom(wake: wake.fd, timeoutNanos: 10_000_000_000) == .room)
        wake.signal()
        #expect(pcm.waitForRoom(wake: wake.fd, timeoutNanos: 10_000_000_000) == .request)
        pcm.close()
        // Closed: nothing to wait for, the write reports the closed pcm.
        #expect(pcm.waitForRoom(wake: wake.fd, timeoutNanos: 10_000_000_000) == .room)
    }

    /// `rewindable` asks `snd_pcm_avail` first (a card's hardware pointer is
    /// otherwise read as of the last write); on alsa-lib's file pcm, whose
    /// queue is what it has not yet written out, the answer is still that
    /// queue, and the rewind takes it back.
    @Test func rewindableAfterAvailAnswersTheQueueAndTheRewindTakesIt() throws {
        let path = "/tmp/ambience-\(getpid())-rewindable.raw"
        unlink(path)
        defer { unlink(path) }
        let pcm = try ALSAPlayback(device: "file:'\(path)',raw", sampleRate: 48_000, periodFrames: 1024, bufferFrames: 4096)
        defer { pcm.close() }
        let period = pcm.negotiated.periodFrames
        let silence = [Int16](repeating: 0, count: 2 * period)
        for written in 1...3 {
            try silence.withUnsafeBufferPointer { _ = try pcm.write($0.baseAddress!, frames: period) }
            #expect(pcm.rewindable() == written * period)
        }
        #expect(pcm.rewind(frames: 2 * period) == 2 * period)
        #expect(pcm.rewindable() == period)
    }
}
