// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import AudioALSA

@Suite struct SPSCQueueTests {
    @Test func fifoWrapsAroundAndReportsFull() {
        let q = SPSCQueue<Int>(minimumCapacity: 3)
        #expect(q.capacity == 4)
        var next = 0, expected = 0
        for _ in 0..<10 {
            while q.push(next) { next += 1 }
            #expect(q.freeCount == 0)
            while let v = q.pop() { #expect(v == expected); expected += 1 }
        }
        #expect(next == 40 && expected == 40)
    }

    @Test func classElementsAreMovedNotReleased() {
        final class Box { let v: Int; init(_ v: Int) { self.v = v } }
        let q = SPSCQueue<Box>(minimumCapacity: 2)
        weak var weakBox: Box?
        do {
            let b = Box(1)
            weakBox = b
            #expect(q.push(b))
        }
        #expect(weakBox != nil, "the queue must keep the element alive")
        let popped = q.pop()
        #expect(popped === weakBox)
    }
}
