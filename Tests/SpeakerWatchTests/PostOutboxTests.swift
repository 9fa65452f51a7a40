// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerWatch

/// The POST queue of `watch --post`: order, retries with a bounded backoff,
/// no event dropped, what each failure says. Manual time.
@Suite struct PostOutboxTests {
    func body(_ s: String) -> [UInt8] { Array(s.utf8) }

    @Test func eventsGoOneAtATimeInOrder() {
        var box = PostOutbox()
        box.enqueue(body("a"))
        box.enqueue(body("b"))
        let first = box.next(now: 0)
        #expect(first?.body == body("a") && first?.sequence == 1 && first?.attempt == 1)
        #expect(box.next(now: 0) == nil, "one request at a time")
        #expect(box.accepted() == nil)
        #expect(box.next(now: 0)?.body == body("b"))
        #expect(box.accepted() == nil)
        #expect(box.next(now: 0) == nil && box.deadline == nil && box.delivered == 2)
    }

    @Test func aFailureKeepsTheEventAtTheHeadAndRetriesAfterADoublingBoundedDelay() {
        var box = PostOutbox(firstDelayMs: 500, maxDelayMs: 4_000)
        box.enqueue(body("a"))
        box.enqueue(body("b"))
        var now: UInt64 = 1_000
        var notes: [String] = []
        var delays: [UInt64] = []
        for _ in 0..<6 {
            let d = box.next(now: now)
            #expect(d?.body == body("a"), "never b before a")
            notes.append(box.failed("HTTP 503 Service Unavailable", now: now))
            let due = box.deadline ?? 0
            delays.append(due - now)
            #expect(box.next(now: due - 1) == nil, "not before the delay")
            now = due
        }
        #expect(delays == [500, 1_000, 2_000, 4_000, 4_000, 4_000])
        #expect(notes[0] == "POST of event #1 failed (attempt 1: HTTP 503 Service Unavailable); retrying in 0.500 s, 2 events waiting")
        #expect(notes[3] == "POST of event #1 failed (attempt 4: HTTP 503 Service Unavailable); retrying in 4 s, 2 events waiting")
        #expect(box.next(now: now)?.attempt == 7)
        #expect(box.accepted() == "POST of event #1 accepted at attempt 7; 1 waiting")
        let b = box.next(now: now)
        #expect(b?.body == body("b") && b?.attempt == 1, "the next event starts afresh, at once")
    }

    @Test func eventsQueuedDuringAnOutageAreAllKeptAndSentInOrder() {
        var box = PostOutbox(firstDelayMs: 100, maxDelayMs: 100)
        var now: UInt64 = 0
        box.enqueue(body("0"))
        _ = box.next(now: now)
        for i in 1..<1_000 {
            _ = box.failed("connection refused", now: now)
            box.enqueue(body("\(i)"))
            now += 100
            #expect(box.next(now: now)?.body == body("0"))
        }
        var sent: [String] = []
        _ = box.accepted()
        while let d = box.next(now: now) {
            sent.append(String(decoding: d.body, as: UTF8.self))
            _ = box.accepted()
        }
        #expect(sent == (1..<1_000).map(String.init))
        #expect(box.delivered == 1_000)
    }
}
