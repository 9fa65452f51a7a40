// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerLoop
import SpeakerRuntime

/// The closing handshake's bound on virtual time: it waits while the broker
/// keeps acknowledging (a slow board draining a burst), gives up on a broker
/// that has gone quiet, and never takes longer than its limit.
@Suite struct ClosingHandshakeTests {
    /// A started, connected runtime whose broker then answers as `broker` says.
    private func stopping(unacknowledged: Int, broker: @escaping (RuntimeHarness, Int) -> Bool) throws -> (RuntimeHarness, Int) {
        let h = try RuntimeHarness()
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        h.mqtt.unacknowledged = unacknowledged
        h.mqtt.onWait = { [unowned h] timeoutMs in broker(h, timeoutMs) }
        let start = h.loop.now()
        _ = h.runtime.stop()
        return (h, Int((h.loop.now() - start) / 1_000_000))
    }

    private func warnings(_ h: RuntimeHarness) -> [String] {
        h.logs.entries.filter { $0.level == .warning && $0.message.contains("unacknowledged") }.map(\.message)
    }

    @Test func aQuietBrokerEndsItAfterTheQuietTime() throws {
        let (h, took) = try stopping(unacknowledged: 3) { h, timeoutMs in
            h.loop.advanceTime(byMilliseconds: timeoutMs)
            return false
        }
        #expect(took == MQTTService.closingQuietMs)
        #expect(warnings(h) == ["3 publication(s) unacknowledged after \(MQTTService.closingQuietMs) ms (no acknowledgement for \(MQTTService.closingQuietMs) ms)"])
    }

    @Test func aSlowBrokerThatKeepsAcknowledgingIsWaitedFor() throws {
        // One acknowledgement every 600 ms: 8 take 4.8 s, past the quiet time many times over.
        let (h, took) = try stopping(unacknowledged: 8) { h, timeoutMs in
            let step = min(timeoutMs, 600)
            h.loop.advanceTime(byMilliseconds: step)
            if step == 600 {
                h.mqtt.unacknowledged -= 1
                h.mqtt.acknowledged += 1
            }
            return step == 600
        }
        #expect(took == 4_800)
        #expect(warnings(h).isEmpty)
        #expect(h.logs.entries.contains { $0.message == "offline acknowledged; every command received was answered or journaled" })
    }

    @Test func aBurstThatNeverEndsStopsAtTheLimit() throws {
        // Every 200 ms one acknowledgement and one new publication: never done.
        let (h, took) = try stopping(unacknowledged: 5) { h, timeoutMs in
            let step = min(timeoutMs, 200)
            h.loop.advanceTime(byMilliseconds: step)
            h.mqtt.acknowledged += 1
            return true
        }
        #expect(took == MQTTService.closingLimitMs)
        #expect(warnings(h) == ["5 publication(s) unacknowledged after \(MQTTService.closingLimitMs) ms (the closing handshake's \(MQTTService.closingLimitMs) ms limit)"])
    }
}
