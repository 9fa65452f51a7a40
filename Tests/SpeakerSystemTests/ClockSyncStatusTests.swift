// SPDX-License-Identifier: Apache-2.0
import Synchronization
import Testing
import SpeakerSystem

/// ``ClockSyncStatus``: one real question per second at most, on manual time.
@Suite struct ClockSyncStatusTests {
    /// Counts the questions and answers what `answer` holds.
    final class Kernel: Sendable {
        let questions = Atomic<Int>(0)
        let answer = Atomic<Bool>(false)
        func ask() -> Bool {
            questions.add(1, ordering: .relaxed)
            return answer.load(ordering: .relaxed)
        }
    }

    @Test func readsOnceThenReusesTheReadingForASecond() {
        let kernel = Kernel()
        let status = ClockSyncStatus(maxAgeNs: 1_000_000_000, read: { kernel.ask() })
        #expect(status.isSynchronised(now: 5_000_000_000) == false)
        kernel.answer.store(true, ordering: .relaxed)  // NTP syncs
        #expect(status.isSynchronised(now: 5_500_000_000) == false)  // within the second: the last reading
        #expect(status.isSynchronised(now: 5_999_999_999) == false)
        #expect(kernel.questions.load(ordering: .relaxed) == 1)
        #expect(status.isSynchronised(now: 6_000_000_000) == true)  // a second old: asked again
        #expect(kernel.questions.load(ordering: .relaxed) == 2)
        #expect(status.isSynchronised(now: 6_100_000_000) == true)
        #expect(kernel.questions.load(ordering: .relaxed) == 2)
    }

    @Test func aClockThatSeemsToGoBackAsksAgain() {
        let kernel = Kernel()
        let status = ClockSyncStatus(read: { kernel.ask() })
        _ = status.isSynchronised(now: 0)  // time 0 counts as a reading (stored as 1 ns)
        _ = status.isSynchronised(now: 2)
        #expect(kernel.questions.load(ordering: .relaxed) == 1)
        _ = status.isSynchronised(now: 10_000_000_000)
        _ = status.isSynchronised(now: 9_000_000_000)  // earlier than the reading: not trusted
        #expect(kernel.questions.load(ordering: .relaxed) == 3)
    }

    @Test func theLiveReadingMatchesTheKernel() {
        #expect(ClockSyncStatus().isSynchronised() == SystemFacts.isClockSynchronised())
    }
}
