// SPDX-License-Identifier: Apache-2.0
import SpeakerLoop
import SpeakerSystem
import SpeakerWatch
import Synchronization

/// The adapter of `watch --post URL`: a thread of its own that POSTs the
/// lifecycle events `PostOutbox` hands it, one at a time in order, and
/// tells the outbox how each went (the outbox decides the retries). The
/// thread blocks only in poll(2) — on the request's socket, or on its
/// eventfd until the next retry is due or an event is queued — so the
/// watcher's MQTT loop never waits on the push server.
final class EventPoster: Sendable {
    private struct Shared {
        var outbox = PostOutbox()
        /// Set by `stop`: the thread ends once the queue is empty or the grace has passed.
        var stopAtMs: UInt64?
    }

    private let post: HTTPPost
    private let logger: Logger
    private let shared = Mutex(Shared())
    private let wake: EventFD
    private let done: EventFD
    private let thread = Mutex<OSThread?>(nil)

    init(url: String, logger: Logger) throws(HTTPPostError) {
        post = try HTTPPost.parse(url).get()
        self.logger = logger
        do {
            wake = try EventFD()
            done = try EventFD()
        } catch {
            throw HTTPPostError("eventfd: \(error)")
        }
    }

    var target: String { "http://\(post.host):\(post.port)\(post.path)" }

    func start() throws(SystemError) {
        let started = try OSThread.start(name: "watch-post") { [self] _ in run() }
        thread.withLock { $0 = started }
    }

    /// Queues one event's JSON line (loop thread).
    func enqueue(_ body: [UInt8]) {
        shared.withLock { $0.outbox.enqueue(body) }
        wake.signal()
    }

    /// Lets the thread send what waits for up to `graceMs`, then ends it;
    /// returns how many events were not accepted (logged as an error).
    @discardableResult
    func stop(graceMs: UInt64) -> Int {
        shared.withLock { $0.stopAtMs = Self.nowMs() + graceMs }
        wake.signal()
        let finished = done.wait(timeoutNanos: Int64(graceMs + 1_000) * 1_000_000)
        if let t = thread.withLock({ $0 }) { finished ? t.join() : t.detach() }
        let left = shared.withLock { $0.outbox.waiting.count }
        if left > 0 { logger.error("\(left) event\(left == 1 ? "" : "s") not accepted by \(target) at exit") }
        return left
    }

    private enum Step {
        case send(PostOutbox.Delivery)
        case wait(nanos: Int64)
        case exit
    }

    private func run() {
        while true {
            let now = Self.nowMs()
            let step: Step = shared.withLock { s in
                if let stopAt = s.stopAtMs, s.outbox.waiting.isEmpty || now >= stopAt { return .exit }
                if let delivery = s.outbox.next(now: now) { return .send(delivery) }
                var until = s.outbox.deadline
                if let stopAt = s.stopAtMs { until = min(until ?? stopAt, stopAt) }
                return .wait(nanos: until.map { Int64($0 > now ? $0 - now : 0) * 1_000_000 } ?? -1)
            }
            switch step {
            case .exit:
                done.signal()
                return
            case .wait(let nanos):
                _ = wake.wait(timeoutNanos: nanos)
                wake.drain()
            case .send(let delivery):
                let problem = post.send(delivery.body)
                let note: String? = shared.withLock { s in
                    if let problem { return s.outbox.failed(problem, now: Self.nowMs()) }
                    return s.outbox.accepted()
                }
                if let note { problem == nil ? logger.notice(note) : logger.warning(note) }
            }
        }
    }

    private static func nowMs() -> UInt64 { MonotonicClock.now() / 1_000_000 }
}
