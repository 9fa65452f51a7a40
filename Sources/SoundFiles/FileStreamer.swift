// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The read-ahead thread for file sounds: keeps each streamed `FileSound`'s
/// ring full, decoding (and resampling) off the audio thread, so the audio
/// thread never reads the disk and long files are never held whole in memory.
///
/// Main thread: `start()`, `shutdown()`. Sources register themselves when
/// created and unregister when released (both on the main thread, under a
/// mutex the audio thread never takes). The audio thread only writes to an
/// eventfd (`requestFill()`) when a ring falls below half.
public final class FileStreamer: @unchecked Sendable {
    // @unchecked Sendable: `streams` is behind a Mutex, the flags are atomics,
    // `thread` is only touched by the main thread, and the eventfd is thread-safe.
    private let wake: EventFD
    /// Signalled by the thread after each pass over the streams (`awaitPass`).
    private let passDone: EventFD
    private let streams = Mutex<[FileStream]>([])
    private let stopRequested = Atomic<Bool>(false)
    private var thread: OSThread?
    private let logger: Logger
    /// Shared by the short loops of every sound this streamer serves (`audio.loopMemoryKB`).
    public let loopBudget: LoopMemoryBudget

    /// A stopped streamer; `logger` gets start/stop lines (main thread only).
    /// Short loops are kept decoded within `loopMemoryBytes` in all.
    public init(logger: Logger, loopMemoryBytes: Int = LoopMemoryBudget.defaultKB * 1024) throws(SystemError) {
        wake = try EventFD()
        passDone = try EventFD()
        self.logger = logger
        loopBudget = LoopMemoryBudget(bytes: loopMemoryBytes)
    }

    deinit {
        // The thread holds a reference while it runs, so this normally runs after
        // `shutdown()`; if the thread itself dropped the last one, don't join it.
        if let thread, !thread.isCurrent { shutdown() }
    }

    /// True between `start()` and `shutdown()`.
    public var isRunning: Bool { thread != nil }

    /// Starts the read-ahead thread (normal priority). Main thread.
    public func start() throws(SystemError) {
        guard thread == nil else { return }
        thread = try OSThread.start(name: "read-ahead") { _ in self.run() }
        logger.info("read-ahead thread started (file sounds stream from disk)")
    }

    /// Stops and joins the thread. Main thread.
    public func shutdown() {
        guard let thread else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
        thread.join()
        self.thread = nil
    }

    /// Streams currently registered (for tests and logs). Main thread.
    public var streamCount: Int { streams.withLock { $0.count } }

    func add(_ stream: FileStream) {
        streams.withLock { $0.append(stream) }
        wake.signal()
    }

    func remove(_ stream: FileStream) {
        streams.withLock { list in list.removeAll { $0 === stream } }
    }

    /// Wakes the thread to top up rings. Audio thread: one write(2) on an
    /// eventfd, no allocation, no lock.
    func requestFill() {
        var one: UInt64 = 1
        _ = write(wake.fd, &one, 8)
    }

    /// Wakes the thread and waits, on an eventfd, until it has finished a pass
    /// over the streams, or `timeoutMs` passed; true when a pass finished. For
    /// callers that must let read-ahead catch up before they read a ring
    /// (tests, which stand in for the audio thread's buffer). Not the audio
    /// thread.
    @discardableResult
    public func awaitPass(timeoutMs: Int32) -> Bool {
        passDone.drain()
        wake.signal()
        var pfd = pollfd(fd: passDone.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, timeoutMs) > 0 else { return false }
        passDone.drain()
        return true
    }

    /// The thread body: sleep on the eventfd, then fill every ring that asked.
    private func run() {
        while !stopRequested.load(ordering: .acquiring) {
            var pfd = pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, -1) < 0 && errno != EINTR { break }
            wake.drain()
            let list = streams.withLock { $0 }
            for stream in list { stream.discardRingIfDrained() }
            for stream in list where !stream.cacheReady.load(ordering: .relaxed)
                && (stream.needsFill.load(ordering: .relaxed) || stream.ring.free > stream.ring.capacity / 2) {
                stream.fill()
            }
            passDone.signal()
        }
    }
}
