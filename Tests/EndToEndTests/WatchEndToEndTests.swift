// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import Testing
import TestSupport

/// `ambient-speaker watch` following the real speaker through a real
/// mosquitto: every lifecycle event exactly once across a broker restart,
/// the watcher's own restart and a re-flashed speaker (new state directory,
/// new epoch, revisions from 1 again).
@Suite(.serialized) struct WatchEndToEndTests {
    /// `kind session-id` of each line, and the parsed lines.
    func summary(_ lines: [String]) -> [String] {
        lines.compactMap { line in
            guard let json = try? JSONParser().parse(line), let kind = json["event"]?.stringValue else { return "unparsed: \(line)" }
            return kind + " " + (json["session"]?["id"]?.stringValue ?? "-") + (json["inferred"] == .bool(true) ? " inferred" : "")
        }
    }

    func command(_ peer: TestPeer, _ root: String, _ id: String, _ action: String, timeout: Double = 10) throws -> Bool {
        try peer.publish(topic: "\(root)/command", string: #"{"id":"\#(id)","action":"\#(action)"}"#)
        return peer.waitForMessage(topic: "\(root)/command/result", timeout: timeout) { $0.payloadString.contains(#""id":"\#(id)""#) } != nil
    }

    @Test func everyEventOnceAcrossRestartsAndAReflash() throws {
        let broker = try TestBroker(persistence: true)
        var peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        var speaker: SpeakerProcess? = try SpeakerProcess(brokerPort: broker.port, logLevel: "info")
        let root = try #require(speaker?.topicRoot)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil)
        let watcher = try WatcherProcess(brokerPort: broker.port)
        try #require(watcher.waitForLog(timeout: 15) { $0.contains("connected to") }, "\(watcher.log)")

        // play, pause: start, update; the idle session the watcher met first is no event.
        try #require(try command(peer, root, "w-1", "play"))
        try #require(try command(peer, root, "w-2", "pause"))
        try #require(watcher.waitForLines(timeout: 10) { $0.count >= 2 }, "\(watcher.lines)\n\(watcher.log)")
        let first = summary(watcher.lines)
        let sessionID = String(first[0].dropFirst("start ".count))
        #expect(first == ["start \(sessionID)", "update \(sessionID)"])

        // A broker restart: both reconnect, the retained state comes again, the speaker republishes: no event.
        try broker.restart()
        peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 30) { $0.payloadString == "online" && !$0.retain } != nil)
        try #require(watcher.waitForLog(timeout: 30) { $0.components(separatedBy: "connected to").count >= 3 }, "\(watcher.log)")
        try #require(try command(peer, root, "w-3", "volumeUp"))
        try #require(watcher.waitForLines(timeout: 10) { $0.count >= 3 }, "\(watcher.lines)")

        // The watcher restarted: it meets the retained session again, once.
        let second = try WatcherProcess(brokerPort: broker.port)
        try #require(second.waitForLines(timeout: 15) { $0.count >= 1 }, "\(second.log)")
        #expect(summary(second.lines) == ["start \(sessionID)"], "a new watcher learns of the live session once")

        // A re-flash: the speaker stops, one with a new state directory takes its id.
        speaker?.process.send(SIGTERM)
        _ = speaker?.process.waitForExit(timeout: 10)
        speaker = nil
        peer.clear()
        speaker = try SpeakerProcess(brokerPort: broker.port, logLevel: "info")
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil)
        try #require(try command(peer, root, "w-4", "play"))
        try #require(watcher.waitForLines(timeout: 10) { $0.count >= 5 }, "\(watcher.lines)")
        let all = summary(watcher.lines)
        let newID = all.last.map { String($0.dropFirst("start ".count)) } ?? ""
        #expect(all == ["start \(sessionID)", "update \(sessionID)", "update \(sessionID)",
                        "end \(sessionID) inferred", "start \(newID)"], "\(watcher.lines)")
        #expect(newID != sessionID && !newID.isEmpty)
        let epochs = watcher.lines.compactMap { try? JSONParser().parse($0)["epoch"]?.stringValue }
        #expect(Set(epochs.prefix(4)).count == 1 && epochs.last != epochs.first, "the re-flash is a new epoch: \(epochs)")
        let revision = (try? JSONParser().parse(watcher.lines.last ?? ""))?["session"]?["revision"]?.numberValue ?? 0
        #expect(revision < 10, "its revisions start over: \(revision)")
        _ = second.waitForLines(timeout: 10) { $0.count >= 3 }
        #expect(summary(second.lines) == ["start \(sessionID)", "end \(sessionID) inferred", "start \(newID)"], "\(second.lines)")
        #expect(!watcher.log.contains("<4>main: ambient-speaker/"), "no payload broke the contract: \(watcher.log)")
    }
}
