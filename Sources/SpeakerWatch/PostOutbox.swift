// SPDX-License-Identifier: Apache-2.0
/// The lifecycle events waiting to be POSTed to a push server, in order:
/// the decisions of `ambient-speaker watch --post URL` as a pure value
/// (manual time in milliseconds, no I/O), so every case is tested exactly.
///
/// One request at a time, oldest first: an event is sent only after every
/// earlier one was accepted, and none is ever dropped while the process
/// lives — a failed request is retried, after a delay that doubles from
/// `firstDelayMs` up to `maxDelayMs`, until it is accepted. What failed and
/// what waits is said in `failed(_:now:)`'s note.
public struct PostOutbox: Sendable, Equatable {
    /// One request to make: the head of the queue.
    public struct Delivery: Sendable, Equatable {
        /// The event's number in this process (1 for the first event), for the log.
        public var sequence: UInt64
        public var body: [UInt8]
        /// 1 on the first try.
        public var attempt: Int
    }

    public let firstDelayMs: UInt64
    public let maxDelayMs: UInt64
    /// The events not yet accepted, oldest first, with their numbers.
    public private(set) var waiting: [(sequence: UInt64, body: [UInt8])] = []
    /// Failed tries of the head so far.
    public private(set) var failures = 0
    /// When the head may be tried again (nil: at once).
    public private(set) var retryAt: UInt64?
    /// Whether the head is being sent now.
    public private(set) var inFlight = false
    /// Events accepted so far.
    public private(set) var delivered: UInt64 = 0
    private var nextSequence: UInt64 = 1

    public init(firstDelayMs: UInt64 = 500, maxDelayMs: UInt64 = 30_000) {
        self.firstDelayMs = firstDelayMs
        self.maxDelayMs = max(firstDelayMs, maxDelayMs)
    }

    public static func == (a: PostOutbox, b: PostOutbox) -> Bool {
        a.waiting.map(\.sequence) == b.waiting.map(\.sequence) && a.failures == b.failures && a.retryAt == b.retryAt
            && a.inFlight == b.inFlight && a.delivered == b.delivered
    }

    /// Queues one event's body behind the others.
    public mutating func enqueue(_ body: [UInt8]) {
        waiting.append((nextSequence, body))
        nextSequence += 1
    }

    /// The request to make now, or nil (nothing waits, one is in flight, or
    /// the head's retry is not due before `now`). Marks it in flight.
    public mutating func next(now: UInt64) -> Delivery? {
        guard !inFlight, let head = waiting.first else { return nil }
        if let retryAt, now < retryAt { return nil }
        inFlight = true
        return Delivery(sequence: head.sequence, body: head.body, attempt: failures + 1)
    }

    /// The in-flight request was accepted: the next event may go. Returns a
    /// note when it had failed before (the server is reachable again).
    public mutating func accepted() -> String? {
        guard inFlight, let head = waiting.first else { return nil }
        inFlight = false
        waiting.removeFirst()
        delivered += 1
        defer { failures = 0; retryAt = nil }
        return failures > 0 ? "POST of event #\(head.sequence) accepted at attempt \(failures + 1); \(waiting.count) waiting" : nil
    }

    /// The in-flight request failed for `reason`: it stays at the head and
    /// is tried again after the backoff. Returns what to log.
    public mutating func failed(_ reason: String, now: UInt64) -> String {
        guard inFlight, let head = waiting.first else { return "POST failed (\(reason)) with nothing in flight" }
        inFlight = false
        failures += 1
        let delay = delayMs(afterFailures: failures)
        retryAt = now + delay
        return "POST of event #\(head.sequence) failed (attempt \(failures): \(reason)); retrying in \(Self.seconds(delay)) s, "
            + "\(waiting.count) event\(waiting.count == 1 ? "" : "s") waiting"
    }

    /// The delay after `failures` failed tries: first, doubled each time, at most max.
    public func delayMs(afterFailures failures: Int) -> UInt64 {
        var delay = firstDelayMs
        for _ in 1..<max(1, failures) where delay < maxDelayMs { delay = min(maxDelayMs, delay * 2) }
        return delay
    }

    /// When something is next due (nil: nothing to do until an event is queued or the in-flight one ends).
    public var deadline: UInt64? {
        guard !inFlight, !waiting.isEmpty else { return nil }
        return retryAt ?? 0
    }

    static func seconds(_ ms: UInt64) -> String {
        ms % 1000 == 0 ? "\(ms / 1000)" : "\(ms / 1000).\(String(ms % 1000 + 1000).dropFirst())"
    }
}
