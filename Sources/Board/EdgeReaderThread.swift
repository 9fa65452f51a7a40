// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import CGPIOD
import SpeakerSystem
import Synchronization

/// Drains the input lines' kernel edge queues on a thread of its own, at
/// SCHED_FIFO priority 40 where allowed (below the kernel's GPIO interrupt
/// threads at 50 and the audio thread at 70), and hands the edges to the
/// event loop through an eventfd.
///
/// Why a thread: the v1 uAPI queues 16 edges per line and drops the newest
/// after that. A fast bouncy turn makes 5 edges per millisecond per phase, so
/// the queue fills in about 3 ms, while the loop thread can be away for longer
/// during such turns (it publishes each detent, other processes run), and
/// edges dropped in the kernel are a miscounted turn. A real-time reader runs
/// as soon as the kernel has queued an edge. Blocks in
/// poll(2) on the lines' fds and a stop eventfd; never sleep-polls.
/// Threading: `start`/`stop`/`take` on the loop thread; `run` on its own.
final class EdgeReaderThread: @unchecked Sendable {
    // Set before the thread starts and read-only after: the requests (used only
    // by the reader thread until `stop` has joined it) and the eventfds.
    private let requests: [OpaquePointer]
    private let queueSize: Int
    private let stopWake: EventFD
    /// Readable when reads are waiting in `take()`.
    let ready: EventFD
    private struct Shared {
        var reads: [EdgeRead] = []
        var realtime: Bool?
    }
    private let shared = Mutex(Shared())
    private var thread: OSThread?

    /// The reader's priority under SCHED_FIFO.
    static let priority: Int32 = 40

    init(requests: [OpaquePointer], queueSize: Int) throws(SystemError) {
        self.requests = requests
        self.queueSize = queueSize
        stopWake = try EventFD()
        ready = try EventFD()
    }

    /// Starts the thread (once).
    func start() throws(SystemError) {
        guard thread == nil else { return }
        thread = try OSThread.start(name: "gpio-edges", realtimePriority: Self.priority) { realtime in
            self.run(realtime: realtime ?? false)
        }
    }

    /// Stops and joins the thread (idempotent); the requests are then free to release.
    func stop() {
        guard let thread else { return }
        stopWake.signal()
        thread.join()
        self.thread = nil
    }

    /// Takes the reads waiting since the last call, and whether the thread got
    /// real-time priority (nil until it has tried).
    func take() -> (reads: [EdgeRead], realtime: Bool?) {
        ready.drain()
        return shared.withLock { state in
            defer { state.reads.removeAll(keepingCapacity: true) }
            return (state.reads, state.realtime)
        }
    }

    /// The thread body; `realtime`: whether SCHED_FIFO was granted.
    private func run(realtime: Bool) {
        shared.withLock { $0.realtime = realtime }
        ready.signal()
        var fds = requests.map { pollfd(fd: cgpiod_request_fd($0), events: Int16(POLLIN), revents: 0) }
        fds.append(pollfd(fd: stopWake.fd, events: Int16(POLLIN), revents: 0))
        var buffer = [cgpiod_event](repeating: cgpiod_event(), count: 16)
        while true {
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                publish([EdgeRead(input: 0, readAt: MonotonicClock.now(), events: [], reread: nil, error: errno)])
                return
            }
            if fds[requests.count].revents != 0 { return }
            var reads: [EdgeRead] = []
            var failed = false
            for index in requests.indices where fds[index].revents != 0 {
                var read = drain(index, buffer: &buffer)
                // A hung-up fd with nothing to read would wake poll forever (at real-time priority).
                let hangUp = Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)
                if read.events.isEmpty && read.error == nil && fds[index].revents & hangUp != 0 { read.error = ENODEV }
                failed = failed || read.error != nil
                if !read.events.isEmpty || read.error != nil { reads.append(read) }
            }
            publish(reads)
            if failed { return }
        }
    }

    /// Reads everything pending on one line; re-reads its level if edges may have been lost.
    private func drain(_ index: Int, buffer: inout [cgpiod_event]) -> EdgeRead {
        let request = requests[index]
        var read = EdgeRead(input: index, readAt: 0, events: [], reread: nil, error: nil)
        while true {
            let n = buffer.withUnsafeMutableBufferPointer { cgpiod_request_read(request, $0.baseAddress, 16) }
            if n < 0 {
                let e = errno
                if e == EINTR { continue }
                if e != EAGAIN && e != EWOULDBLOCK { read.error = e }
                break
            }
            for event in buffer.prefix(Int(n)) {
                read.events.append(.init(isActive: event.rising != 0, at: event.timestamp_ns, lost: event.lost))
            }
            if n < 16 { break }
        }
        if read.error == nil && LineLevelResync.mayHaveLost(read.events, queueSize: queueSize) {
            let value = cgpiod_request_get_value(request)
            if value >= 0 { read.reread = value != 0 }
        }
        read.readAt = MonotonicClock.now()
        return read
    }

    private func publish(_ reads: [EdgeRead]) {
        guard !reads.isEmpty else { return }
        shared.withLock { $0.reads += reads }
        ready.signal()
    }
}
