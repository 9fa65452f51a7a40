// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import SpeakerPorts
import SpeakerRuntime

/// The stop and the command journal through the whole runtime, on real
/// files: a command read during the closing handshake is held on disk for
/// the next process, not applied and not answered.
@Suite struct JournalRuntimeTests {
    @Test func commandsReadDuringTheStopAreJournaledUnappliedForTheNextStart() throws {
        let h = try RuntimeHarness()
        try h.runtime.start()
        h.deliver([.connected(sessionPresent: false)])
        h.loop.runDueTimers()
        let before = h.state.volume.level
        let topic = "\(h.config.topicRoot)/command"
        // Read by the closing handshake's first drain, after `.stopping`.
        h.mqtt.pendingEvents = [
            .message(MQTTMessage(topic: topic, payload: Array(#"{"id":"late1","action":"setVolume","level":0.9}"#.utf8), qos: 1)),
            .message(MQTTMessage(topic: topic, payload: Array(#"{"id":"late2","action":"next"}"#.utf8), qos: 1)),
        ]
        #expect(h.runtime.stop() == 0)
        #expect(h.state.volume.level == before, "not applied")
        #expect(!h.published("command/result").contains { $0.contains("late") }, "not answered by the stopping process")
        let journal = try CommandJournal.decode(FileIO.read(path: h.directory + "/commands.json"), deviceID: h.config.device.id)
        #expect(journal.held.map(\.id) == ["late1", "late2"])
        #expect(journal.held.allSatisfy { !$0.applied })
        #expect(h.logs.entries.contains { $0.message.contains("stopping: commands arriving from now on are kept for the next start") })
    }
}
