// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpeakerProtocol
import Testing
import TestSupport

/// `audio: "unavailable"` end to end: the built binary with a real alsa-lib
/// pcm that fails, a real mosquitto, and a peer in the role of the server.
/// While the output fails, `device.audio` is `unavailable`, `session` says
/// `isPlaying: false` with `intendsPlayback` as it was, `commands` omits
/// `play`, and a `play` command is answered `audio-unavailable` and changes
/// nothing; when the output works again, `audio` is `ok` and playback resumes
/// by itself because it is still intended (mqtt-contract.md, `session`).
@Suite(.serialized) struct AudioUnavailableEndToEndTests {
    static func parse(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    /// The `audio` of a `device` payload, or of the device embedded in a `session`.
    static func audio(_ v: JSONValue?) -> String? { (v?["audio"] ?? v?["devices"]?.first?["audio"])?.stringValue }

    static func commands(_ session: JSONValue?) -> [String] {
        if case .array(let list)? = session?["commands"] { return list.compactMap(\.stringValue) }
        return []
    }

    /// Sends a command and waits for its result.
    static func send(_ peer: TestPeer, _ root: String, _ id: String, _ body: String) throws -> JSONValue? {
        try peer.publish(topic: "\(root)/command", string: body)
        return parse(peer.waitForMessage(topic: "\(root)/command/result", timeout: 20) { parse($0)?["id"] == .string(id) })
    }

    /// The first `session` received since `after` (a monotonic timestamp) that
    /// satisfies `predicate`; waits up to `timeout` seconds for one.
    static func waitForSession(_ peer: TestPeer, _ root: String, after: UInt64 = 0, timeout: Double = 30,
                               _ predicate: @escaping (JSONValue) -> Bool) -> JSONValue? {
        parse(peer.waitForMessage(topic: "\(root)/session", timeout: timeout) {
            $0.receivedAtNanoseconds >= after && parse($0).map(predicate) == true
        })
    }

    /// While the output is unavailable and playback intended: `play` is
    /// refused with `audio-unavailable`, and nothing is published for it.
    static func playIsRefused(_ peer: TestPeer, _ root: String, id: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = parse(peer.messages(on: "\(root)/session").last)
        let marker = Monotonic.nanoseconds()
        let result = try send(peer, root, id, #"{"id":"\#(id)","action":"play"}"#)
        #expect(result?["ok"] == .bool(false), "\(String(describing: result))", sourceLocation: sourceLocation)
        #expect(result?["error"]?["code"] == .string("audio-unavailable"), "\(String(describing: result))", sourceLocation: sourceLocation)
        #expect(result?["revision"] == nil, sourceLocation: sourceLocation)
        // A rejected command changes nothing: no session or device follows it.
        _ = peer.waitForMessage(topic: "\(root)/never", timeout: 1)
        let after = peer.messages(on: "\(root)/session").filter { $0.receivedAtNanoseconds >= marker }
            + peer.messages(on: "\(root)/device").filter { $0.receivedAtNanoseconds >= marker }
        #expect(after.isEmpty, "published after a rejected play: \(after.map(\.payloadString))", sourceLocation: sourceLocation)
        #expect(parse(peer.messages(on: "\(root)/session").last) == before, sourceLocation: sourceLocation)
    }

    @Test func anOutputThatBreaksWhilePlayingIsReportedRefusesPlayAndResumesWhenBack() throws {
        // A real alsa-lib file pcm writing into a pipe: when the reading end
        // closes its writes fail (EPIPE), like a USB DAC pulled out mid-play.
        let fifo = try DrainedFIFO()
        defer { fifo.stop() }
        let broker = try TestBroker()
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "unplug", mqttConfig: #""homeAssistant":{"enabled":false}"#,
                                         audioDevice: "file:'\(fifo.path)',raw")
        let root = speaker.topicRoot
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        #expect(Self.audio(Self.parse(peer.messages(on: "\(root)/device").last)) == "ok")

        let started = try Self.send(peer, root, "p1", #"{"id":"p1","action":"play"}"#)
        #expect(started?["ok"] == .bool(true), "\(String(describing: started))")
        let playing = try #require(Self.waitForSession(peer, root) { $0["isPlaying"] == .bool(true) }, "\(speaker.log)")
        let sessionID = try #require(playing["id"]?.stringValue)
        let flowing = fifo.bytesRead
        #expect(fifo.waitForBytes(flowing + 48_000, timeout: 20), "audio reaches the pipe")

        // Unplugged.
        let unplugged = Monotonic.nanoseconds()
        fifo.disconnect()
        let device = Self.parse(peer.waitForMessage(topic: "\(root)/device", timeout: 30) {
            $0.receivedAtNanoseconds >= unplugged && Self.audio(Self.parse($0)) == "unavailable"
        })
        #expect(device != nil, "device.audio never became unavailable\n\(speaker.log.suffix(3000))")
        let broken = try #require(Self.waitForSession(peer, root, after: unplugged) { Self.audio($0) == "unavailable" })
        #expect(broken["isPlaying"] == .bool(false), "isPlaying reports the engine's truth: \(broken)")
        #expect(broken["intendsPlayback"] == .bool(true), "the listener's intent is kept: \(broken)")
        #expect(broken["id"] == .string(sessionID) && broken["ended"] == .bool(false), "the session goes on: \(broken)")
        let offered = Self.commands(broken)
        #expect(!offered.contains("play") && !offered.contains("select") && !offered.contains("next"), "\(offered)")
        #expect(offered.contains("pause") && offered.contains("setVolume"), "\(offered)")
        #expect(speaker.log.contains("audio output unavailable"), "logged with its reason")

        try Self.playIsRefused(peer, root, id: "p2")
        let selected = try Self.send(peer, root, "s1", #"{"id":"s1","action":"select","soundID":"rain"}"#)
        #expect(selected?["error"]?["code"] == .string("audio-unavailable"), "\(String(describing: selected))")

        // Plugged back in: the engine reopens it by itself and, as playback is still intended, plays.
        let replugged = Monotonic.nanoseconds()
        fifo.connect()
        let back = Self.waitForSession(peer, root, after: replugged) { Self.audio($0) == "ok" && $0["isPlaying"] == .bool(true) }
        #expect(back != nil, "playback did not resume\n\(speaker.log.suffix(3000))")
        #expect(back?["id"] == .string(sessionID) && back?["intendsPlayback"] == .bool(true))
        #expect(Self.commands(back).contains("pause") && !Self.commands(back).contains("play"))
        #expect(peer.messages(on: "\(root)/device").contains {
            $0.receivedAtNanoseconds >= replugged && Self.audio(Self.parse($0)) == "ok"
        })
        let resumed = fifo.bytesRead
        #expect(fifo.waitForBytes(resumed + 96_000, timeout: 20), "audio flows into the pipe again")
        #expect(ContractEndToEndTests.revisionsIncrease(peer.messages(on: "\(root)/session")))
        #expect(try ContractEndToEndTests.validateAll(peer, root: root, deviceID: "unplug") > 0)
    }

    @Test func anOutputThatNeverWorkedTurnsPlayIntoIntentAndPlaysOnceItWorks() throws {
        // A file pcm whose directory does not exist opens but fails every write;
        // creating the directory "plugs the device in".
        var template = Array("/tmp/speaker-e2e-pcm-XXXXXX".utf8CString)
        let base = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } })
        let missing = base + "/not-yet"
        defer {
            unlink(missing + "/out.raw")
            rmdir(missing)
            rmdir(base)
        }
        let broker = try TestBroker()
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "nodir", mqttConfig: #""homeAssistant":{"enabled":false}"#,
                                         audioDevice: "file:'\(missing)/out.raw',raw")
        let root = speaker.topicRoot
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil, "\(speaker.log)")

        // Paused, the pcm only had to open; the first play is what finds it broken.
        let first = try Self.send(peer, root, "p1", #"{"id":"p1","action":"play"}"#)
        #expect(first != nil, "exactly one result, even when the engine fails the request")
        let broken = try #require(Self.waitForSession(peer, root) { Self.audio($0) == "unavailable" }, "\(speaker.log.suffix(3000))")
        #expect(broken["isPlaying"] == .bool(false) && broken["intendsPlayback"] == .bool(true), "\(broken)")
        #expect(!Self.commands(broken).contains("play"), "\(Self.commands(broken))")
        #expect(Self.audio(Self.parse(peer.messages(on: "\(root)/device").last)) == "unavailable")
        try Self.playIsRefused(peer, root, id: "p2")

        let created = Monotonic.nanoseconds()
        #expect(mkdir(missing, 0o755) == 0)
        let back = Self.waitForSession(peer, root, after: created) { Self.audio($0) == "ok" && $0["isPlaying"] == .bool(true) }
        #expect(back != nil, "playback did not start once the output worked\n\(speaker.log.suffix(3000))")
        #expect(back?["id"] == broken["id"])
        var size = stat()
        for _ in 0..<200 where stat(missing + "/out.raw", &size) != 0 || size.st_size < 192_000 {
            _ = peer.waitForMessage(topic: "\(root)/never", timeout: 0.1)
        }
        #expect(size.st_size >= 192_000, "audio written to the pcm once the directory exists: \(size.st_size) bytes")
        let paused = try Self.send(peer, root, "p3", #"{"id":"p3","action":"pause"}"#)
        #expect(paused?["ok"] == .bool(true), "\(String(describing: paused))")
    }
}
