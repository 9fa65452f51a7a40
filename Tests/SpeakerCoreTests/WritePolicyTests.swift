// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import Testing

/// The core's write policy: a command's result — and nothing else — is
/// marked to leave at once (`Publication.deliverNow`), ahead of the `device`
/// and `session` it names, which leave with the rest of the dispatch.
@Suite struct WritePolicyTests {
    @Test func onlyResultsLeaveAtOnce() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        let fx = h.commandDone(#"{"id":"v1","action":"setVolume","level":0.3}"#)
            + h.command(#"{"id":"p1","action":"play"}"#, responseTopic: "reply/here", correlation: [7])
            + h.send(.engine(.playing(ticket: 1), at: h.now))
        let marked = fx.publications.filter(\.deliverNow).map(\.topic)
        #expect(marked == ["ambient-speaker/kitchen/command/result", "ambient-speaker/kitchen/command/result"])
        let results = fx.publications.filter { $0.topic.hasSuffix("/command/result") }
        #expect(results.count == 2 && results.allSatisfy(\.deliverNow))
        #expect(fx.publications.contains { $0.topic == "reply/here" && !$0.deliverNow },
                "the v5 response-topic copy leaves with the rest")
        #expect(fx.publications.filter { !$0.topic.hasSuffix("/command/result") }.allSatisfy { !$0.deliverNow })
    }

    @Test func aResultLeavesAheadOfTheStateItNames() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
        let fx = h.commandDone(#"{"id":"v2","action":"setVolume","level":0.65}"#)
        let topics = fx.publications.map { String($0.topic.dropFirst("ambient-speaker/kitchen/".count)) }
        #expect(topics == ["command/result", "device", "session"])
    }
}
