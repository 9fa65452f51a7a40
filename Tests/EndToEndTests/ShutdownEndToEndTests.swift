// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerProtocol
import TestSupport

/// A restart loses no command: what arrives while the speaker stops on
/// SIGTERM is held in the command journal for the next process, or left
/// unacknowledged for the broker to deliver again to it (its persistent session) —
/// against a real mosquitto and two real speaker processes on one state
/// directory, as an upgrade restarts the unit.
@Suite struct ShutdownEndToEndTests {
    @Test func everyCommandSentAcrossASIGTERMRestartIsAnsweredExactlyOnce() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        let root = "ambient-speaker/e2e"
        try peer.subscribe("\(root)/command/result")
        try peer.subscribe("\(root)/availability")
        let stateDirectory = try TemporaryDirectory(prefix: "speaker-state")
        let state = stateDirectory.path
        defer { withExtendedLifetime(stateDirectory) {} }  // removed only when the test is done

        var sent: [String] = []
        func send() throws {
            let id = "s\(sent.count)"
            sent.append(id)
            _ = try peer.publish(topic: "\(root)/command",
                                 string: #"{"id":"\#(id)","action":"setVolume","level":0.\#(3 + sent.count % 5)}"#)
        }
        let first = try SpeakerProcess(brokerPort: broker.port, stateDirectory: state)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" && !$0.retain } != nil,
                     "\(first.log)")
        for _ in 0..<20 { try send() }
        first.process.send(SIGTERM)
        // Commands keep coming while it stops: one every 2 ms until it has
        // exited, from a client that, like the Home Assistant integration,
        // waits for results once 50 of its commands are unanswered (a flood
        // without that bound outruns a slow board's bounded stop).
        // The first one goes right after the signal, before looking for the
        // exit: on a loaded host this process may get the CPU only after a
        // quick stop has ended, and the test is about commands across it.
        try send()
        var duringStop = 1
        while first.process.waitForExit(timeout: 0.002) == nil && duringStop < 5000 {
            guard sent.count - peer.messages(on: "\(root)/command/result").count < 50 else { continue }
            try send()
            duringStop += 1
        }
        #expect(first.process.waitForExit(timeout: 10) == 0, "\(first.log)")
        for _ in 0..<20 { try send() }  // queued by the broker for the persistent session
        #expect(peer.waitForPublishes(), "the broker acknowledged every command")

        let second = try SpeakerProcess(brokerPort: broker.port, stateDirectory: state)
        func answered(_ messages: [ReceivedMessage]) -> [String: Int] {
            var counts: [String: Int] = [:]
            for m in messages where m.topic == "\(root)/command/result" {
                if let id = (try? JSONParser().parse(m.payload))?["id"]?.stringValue { counts[id, default: 0] += 1 }
            }
            return counts
        }
        let everyone = sent.count
        _ = peer.wait(timeout: 30, until: { all -> Bool? in answered(all).count >= everyone ? true : nil })
        let counts = answered(peer.messages(on: "\(root)/command/result"))
        let missing = sent.filter { counts[$0] == nil }
        let repeated = counts.filter { $0.value > 1 }.keys.sorted()
        print("commands sent \(sent.count) (\(duringStop) after the signal, before its exit was seen); unanswered \(missing.count), answered twice \(repeated.count)")
        #expect(missing.isEmpty, "unanswered: \(missing.prefix(20)); first log:\n\(first.log)\nsecond log:\n\(second.log)")
        #expect(repeated.isEmpty, "answered twice: \(repeated.prefix(20))")
    }
}
