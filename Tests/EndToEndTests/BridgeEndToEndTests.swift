// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import Testing
import TestSupport

/// The speaker on one mosquitto, the watcher and a command sender on a
/// second one bridged to it (`topic ambient-speaker/# both 1`): retained
/// state crosses the bridge, commands go back over it, every lifecycle event
/// comes once, also after the readers' broker restarts (the bridge
/// reconnects and hands the retained state over again).
@Suite(.serialized) struct BridgeEndToEndTests {
    func summary(_ lines: [String]) -> [String] {
        lines.map { line in
            let json = try? JSONParser().parse(line)
            return (json?["event"]?.stringValue ?? "?") + " " + (json?["session"]?["id"]?.stringValue ?? "-")
        }
    }

    @Test func theWatcherFollowsTheSpeakerThroughABridge() throws {
        let home = try TestBroker()
        let readers = try TestBroker(extraConfig: [
            "connection speakers", "address 127.0.0.1:\(home.port)", "topic ambient-speaker/# both 1",
            "cleansession false", "restart_timeout 1 2",
        ])
        let speaker = try SpeakerProcess(brokerPort: home.port, logLevel: "info")
        let root = speaker.topicRoot
        var peer = try TestPeer(port: readers.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        // The retained state crosses the bridge once the speaker is online.
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil,
                     "\(readers.log.suffix(2000))")
        let watcher = try WatcherProcess(brokerPort: readers.port)
        try #require(watcher.waitForLog(timeout: 15) { $0.contains("connected to") }, "\(watcher.log)")

        func command(_ id: String, _ action: String) throws -> ReceivedMessage? {
            try peer.publish(topic: "\(root)/command", string: #"{"id":"\#(id)","action":"\#(action)"}"#)
            return peer.waitForMessage(topic: "\(root)/command/result", timeout: 15) { $0.payloadString.contains(#""id":"\#(id)""#) }
        }
        try #require(try command("b-1", "play") != nil, "the command crossed the bridge and its result came back")
        try #require(watcher.waitForLines(timeout: 10) { !$0.isEmpty }, "\(watcher.log)")
        let id = String(summary(watcher.lines)[0].dropFirst("start ".count))

        // The readers' broker restarts: the bridge and the watcher reconnect; nothing repeats.
        readers.stop()
        try readers.start()
        peer = try TestPeer(port: readers.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        try #require(watcher.waitForLog(timeout: 30) { $0.components(separatedBy: "connected to").count >= 3 }, "\(watcher.log)")
        try #require(peer.waitForMessage(topic: "\(root)/session", timeout: 30) { _ in true } != nil, "retained again through the bridge")
        try #require(try command("b-2", "stop") != nil, "\(readers.log.suffix(2000))")
        try #require(watcher.waitForLines(timeout: 10) { $0.count >= 2 }, "\(watcher.lines)")
        #expect(summary(watcher.lines) == ["start \(id)", "end \(id)"])
        #expect(!watcher.log.contains("<4>main: ambient-speaker/"), "\(watcher.log)")
    }
}
