// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import Testing
import TestSupport

/// `ambient-speaker watch --post URL` against a real local HTTP server that
/// fails the first requests (two 503s, one connection closed unanswered):
/// every event the watcher printed reaches the server exactly once, in
/// order, and the log says what failed and when it was retried.
@Suite(.serialized) struct WatchPostEndToEndTests {
    func command(_ peer: TestPeer, _ root: String, _ id: String, _ action: String) throws -> Bool {
        try peer.publish(topic: "\(root)/command", string: #"{"id":"\#(id)","action":"\#(action)"}"#)
        return peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains(#""id":"\#(id)""#) } != nil
    }

    /// A broker, a peer following the speaker's topics, and the speaker, online.
    func online() throws -> (TestBroker, TestPeer, SpeakerProcess) {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let speaker = try SpeakerProcess(brokerPort: broker.port, logLevel: "info")
        try #require(peer.waitForMessage(topic: "\(speaker.topicRoot)/availability", timeout: 60) { $0.payloadString == "online" } != nil)
        return (broker, peer, speaker)
    }

    @Test func everyEventIsPostedOnceInOrderThroughFailures() throws {
        let server = try FlakyHTTPServer(failures: [.status503, .status503, .close])
        defer { server.stop() }
        let (broker, peer, speaker) = try online()
        let root = speaker.topicRoot
        let watcher = try WatcherProcess(brokerPort: broker.port, arguments: ["--post", "http://127.0.0.1:\(server.port)/events"])
        try #require(watcher.waitForLog(timeout: 15) { $0.contains("connected to") }, "\(watcher.log)")

        try #require(try command(peer, root, "p-1", "play"))
        try #require(try command(peer, root, "p-2", "pause"))
        try #require(try command(peer, root, "p-3", "stop"))
        try #require(watcher.waitForLines(timeout: 10) { $0.count >= 3 }, "\(watcher.lines)\n\(watcher.log)")
        let printed = watcher.lines
        #expect(printed.compactMap { try? JSONParser().parse($0)["event"]?.stringValue } == ["start", "update", "end"])
        #expect(server.wait(timeout: 30) { $0.accepted.count >= printed.count }, "\(server.accepted)\n\(watcher.log)")
        #expect(server.accepted == printed, "each printed line posted once, in order")
        #expect(server.requests == printed.count + 3, "three failed tries, then one request per event")
        let log = watcher.log
        #expect(log.contains("POST of event #1 failed (attempt 1: HTTP 503 Service Unavailable); retrying in 0.500 s"), "\(log)")
        #expect(log.contains("POST of event #1 failed (attempt 2: HTTP 503 Service Unavailable); retrying in 1 s"), "\(log)")
        #expect(log.contains("POST of event #1 failed (attempt 3: closed without an answer); retrying in 2 s"), "\(log)")
        #expect(log.contains("POST of event #1 accepted at attempt 4"), "\(log)")
        watcher.process.send(SIGTERM)
        #expect(watcher.process.waitForExit(timeout: 10) == 0)
        #expect(!watcher.log.contains("not accepted"), "nothing left at exit: \(watcher.log)")
    }

    @Test func whatIsLeftAtExitIsSaid() throws {
        let (broker, peer, speaker) = try online()
        let root = speaker.topicRoot
        // Port 1 on loopback: refused at once, every time.
        let watcher = try WatcherProcess(brokerPort: broker.port, arguments: ["--post", "http://127.0.0.1:1/"])
        try #require(watcher.waitForLog(timeout: 15) { $0.contains("connected to") }, "\(watcher.log)")
        try #require(try command(peer, root, "q-1", "play"))
        try #require(watcher.waitForLog(timeout: 10) { $0.contains("connect: Connection refused") }, "\(watcher.log)")
        watcher.process.send(SIGTERM)
        #expect(watcher.process.waitForExit(timeout: 15) == 0)
        #expect(watcher.log.contains("1 event not accepted by http://127.0.0.1:1/ at exit"), "\(watcher.log)")
    }
}
