// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import Testing

/// The topic names of mqtt-contract.md, "Topics", under one root.
@Suite struct SpeakerTopicsTests {
    @Test func everyTopicIsUnderTheRootAsTheContractNamesIt() {
        let t = SpeakerTopics(root: "ambient-speaker/kitchen")
        #expect([t.device, t.session, t.catalog, t.command, t.result, t.event, t.availability] == [
            "ambient-speaker/kitchen/device", "ambient-speaker/kitchen/session", "ambient-speaker/kitchen/catalog",
            "ambient-speaker/kitchen/command", "ambient-speaker/kitchen/command/result", "ambient-speaker/kitchen/event",
            "ambient-speaker/kitchen/availability",
        ])
        #expect(SpeakerTopics.online == Array("online".utf8) && SpeakerTopics.offline == Array("offline".utf8))
    }
}
