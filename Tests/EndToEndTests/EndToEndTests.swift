// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerProtocol

/// The built binary, end to end: a real mosquitto on loopback, the simulated
/// board driven through its control socket, a real alsa-lib file pcm.
@Suite(.serialized) struct EndToEndTests {
    func json(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    /// Waits for a `session` publication matching `check`.
    func session(_ peer: TestPeer, _ root: String, timeout: Double = 10, _ check: @escaping (JSONValue) -> Bool) -> JSONValue? {
        json(peer.waitForMessage(topic: "\(root)/session", timeout: timeout) { m in
            (try? JSONParser().parse(m.payload)).map(check) ?? false
        })
    }

    /// RMS of the last `frames` stereo frames written to the pcm file, waiting for them to exist.
    func recentRMS(_ speaker: SpeakerProcess, frames: Int = 4800) -> Double {
        let samples = speaker.pcmSamples().suffix(frames * 2)
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot() / 32768
    }

    @Test func playPressTurnGarbageAndSIGTERM() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let speaker = try SpeakerProcess(brokerPort: broker.port, extraConfig: #""inputs":{"encoder":{"acceleration":false}}"#)
        let root = speaker.topicRoot

        // Connect: device, catalog, session, then online last.
        let online = peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" }
        try #require(online != nil, "speaker never came online:\n\(speaker.log)")
        let order = peer.allMessages.map(\.topic).filter { !$0.hasSuffix("/event") }
        let lastDevice = order.lastIndex(of: "\(root)/device") ?? .max
        let lastCatalog = order.lastIndex(of: "\(root)/catalog") ?? .max
        let lastSession = order.lastIndex(of: "\(root)/session") ?? .max
        let onlineIndex = order.lastIndex(of: "\(root)/availability") ?? -1
        #expect(lastDevice < lastCatalog && lastCatalog < lastSession && lastSession < onlineIndex, "order: \(order)")
        let initial = json(peer.messages(on: "\(root)/session").last)
        #expect(initial?["ended"] == .bool(true) && initial?["isPlaying"] == .bool(false))

        // play over MQTT: the session says playing, the result says ok, the pcm gets real audio.
        try peer.publish(topic: "\(root)/command", string: #"{"id":"e2e-play","action":"play"}"#)
        let playing = session(peer, root) { $0["isPlaying"] == .bool(true) }
        #expect(playing?["intendsPlayback"] == .bool(true))
        #expect(playing?["id"]?.stringValue?.count == 36)
        let result = json(peer.waitForMessage(topic: "\(root)/command/result") { $0.payloadString.contains("e2e-play") })
        #expect(result?["ok"] == .bool(true))
        #expect(result?["revision"] == playing?["revision"])
        _ = peer.waitForMessage(topic: "never", timeout: 0.4) // let ~0.4 s of audio reach the file
        let playingRMS = recentRMS(speaker)
        #expect(playingRMS > 0.001, "the pcm should carry non-silent audio, RMS \(playingRMS)")

        // press playPause on the board: paused, same session.
        #expect(try speaker.control("press playPause") == "ok")
        let paused = session(peer, root) { $0["isPlaying"] == .bool(false) && $0["ended"] == .bool(false) }
        #expect(paused?["id"] == playing?["id"])
        #expect(json(peer.waitForMessage(topic: "\(root)/event"))?.jsonText == #"{"source":"button","name":"playPause","gesture":"press"}"#)
        _ = peer.waitForMessage(topic: "never", timeout: 0.3)
        #expect(recentRMS(speaker, frames: 2400) == 0, "paused means silence after the fade")

        // turn +2: the level rises by two steps.
        #expect(try speaker.control("turn +2") == "ok")
        let louder = session(peer, root) { $0["devices"]?.first?["volume"]?["level"] == .number(0.5) }
        #expect(louder != nil, "level should go 0.4 → 0.5:\n\(peer.messages(on: "\(root)/device").map(\.payloadString))")

        // garbage: a malformed result with a null id, and nothing else changes.
        try peer.publish(topic: "\(root)/command", string: "this is not json")
        let malformed = json(peer.waitForMessage(topic: "\(root)/command/result") { $0.payloadString.contains("malformed") })
        #expect(malformed?["id"] == .null && malformed?["ok"] == .bool(false))

        // SIGTERM: offline, exit 0.
        peer.clear()
        speaker.process.send(SIGTERM)
        #expect(speaker.process.waitForExit(timeout: 5) == 0, "exit status; log:\n\(speaker.log)")
        let offline = peer.waitForMessage(topic: "\(root)/availability") { $0.payloadString == "offline" }
        #expect(offline != nil)
    }

    @Test func killedSpeakerGoesOfflineThroughTheWill() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/will/availability")
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "will")
        try #require(peer.waitForMessage(topic: "ambient-speaker/will/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        peer.clear()
        speaker.process.send(SIGKILL)
        #expect(speaker.process.waitForExit(timeout: 5) == 128 + SIGKILL)
        // The broker notices the dead connection when the socket closes and publishes the will.
        #expect(peer.waitForMessage(topic: "ambient-speaker/will/availability", timeout: 10) { $0.payloadString == "offline" } != nil)
    }

    @Test func playsWithNoBrokerAtAll() throws {
        let closedPort = try FreePort.find()
        let speaker = try SpeakerProcess(brokerPort: closedPort, deviceID: "alone")
        #expect(try speaker.control("press playPause") == "ok")
        var rms = 0.0
        for _ in 0..<50 where rms < 0.001 {
            var entry = pollfd(fd: -1, events: 0, revents: 0)
            _ = poll(&entry, 0, 100)
            rms = recentRMS(speaker)
        }
        #expect(rms > 0.001, "audio without a broker; log:\n\(speaker.log)")
        speaker.process.send(SIGTERM)
        #expect(speaker.process.waitForExit(timeout: 5) == 0)
    }

    @Test func badConfigExitsOneNamingTheKey() throws {
        let path = "/tmp/e2e-bad-\(getpid()).json"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = #"{"volume":{"step":2}}"#.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        defer { unlink(path) }
        let log = "/tmp/e2e-bad-\(getpid()).log"
        defer { unlink(log) }
        let process = try ChildProcess(executable: try SpeakerProcess.binaryPath(), arguments: ["check-config", path], logPath: log)
        #expect(process.waitForExit(timeout: 10) == 1)
        let run = try ChildProcess(executable: try SpeakerProcess.binaryPath(), arguments: ["run", "--config", path], logPath: log)
        #expect(run.waitForExit(timeout: 10) == 1)
        let text = String(decoding: (try? FileIOForTests.read(log)) ?? [], as: UTF8.self)
        #expect(text.contains("volume.step: must be in (0, 0.5], got 2"))
    }
}

enum FileIOForTests {
    static func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out += chunk[0..<n]
        }
    }
}

extension JSONValue {
    var first: JSONValue? { if case .array(let a) = self { return a.first } else { return nil } }
}
