// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import SpeakerSystem
import Testing
import TestSupport

/// A hostile MQTT world, with the real speaker binary and a real mosquitto:
/// two speakers with one device id, a retained command, a 64 MiB command, a
/// response topic aimed at the speaker's own state and a broker that is not
/// there.
@Suite struct HostileMQTTEndToEndTests {
    func waitForLog(_ speaker: SpeakerProcess, timeout: Double, _ body: (String) -> Bool) -> Bool {
        speaker.waitForLog(timeout: timeout, until: body)
    }

    static func count(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    static let takeover = "another client with this speaker's client id took over its session"

    @Test func row9_twoSpeakersWithOneDeviceIDSayWhyAndBackOff() throws {
        let broker = try TestBroker()
        let mqtt = #""homeAssistant":{"enabled":false}"#
        let a = try SpeakerProcess(brokerPort: broker.port, deviceID: "twin", logLevel: "info", mqttConfig: mqtt)
        let b = try SpeakerProcess(brokerPort: broker.port, deviceID: "twin", logLevel: "info", mqttConfig: mqtt)
        let named = waitForLog(a, timeout: 60) { $0.contains(Self.takeover) }
            && waitForLog(b, timeout: 30) { $0.contains(Self.takeover) }
        #expect(named, "A:\n\(a.log)\nB:\n\(b.log)")
        for speaker in [a, b] {
            #expect(Self.count(Self.takeover, in: speaker.log) == 1, "said once:\n\(speaker.log)")
            #expect(speaker.log.contains("device id \"twin\""))
            #expect(!speaker.log.contains("connection lost (7)"), "the old errno-style text is gone")
        }
        // Backing off: far fewer connects than two speakers reconnecting without a pause would make.
        let connects = Self.count("New client connected", in: broker.log)
        print("row 9: \(connects) connects of the two speakers until both named the takeover")
        #expect(connects < 30, "\(connects) connects")
        // Then they reconnect every 2–5 s each.
        _ = waitForLog(a, timeout: 20) { _ in false }
        let later = Self.count("New client connected", in: broker.log) - connects
        print("row 9: \(later) connects in the next 20 s")
        #expect(later <= 22, "\(later) connects in 20 s")
    }

    @Test func row6_aRetainedCommandDoesNotRunAtStart() throws {
        let broker = try TestBroker()
        let root = "ambient-speaker/retained"
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        try peer.publish(topic: "\(root)/command", string: #"{"id":"old","action":"setVolume","level":0.9}"#, retain: true)
        #expect(peer.waitForPublishes())
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "retained", extraConfig: #""volume":{"initialLevel":0.2}"#,
                                         logLevel: "info", mqttConfig: #""homeAssistant":{"enabled":false}"#)
        #expect(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        // A live command after it proves the retained one was seen and passed over.
        try peer.publish(topic: "\(root)/command", string: #"{"id":"live","action":"volumeUp"}"#)
        let result = peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains("\"live\"") }
        #expect(result != nil, "\(speaker.log)")
        #expect(!peer.messages(on: "\(root)/command/result").contains { $0.payloadString.contains("\"old\"") })
        // The result leaves just ahead of the state it names: wait for that session.
        #expect(peer.waitForSession(under: root, namedBy: result.flatMap { try? JSONParser().parse($0.payload) }))
        let level = peer.messages(on: "\(root)/device").last.flatMap { try? JSONParser().parse(Array($0.payloadString.utf8)) }?["volume"]?["level"]
        #expect(level == .number(0.25), "0.2 + one step, never 0.9: \(String(describing: level))")
        #expect(Self.count("ignoring a retained message", in: speaker.log) == 1, "\(speaker.log)")
        Self.tearDown(peer, broker)
    }

    /// Disconnects the peer while its broker still runs: a TestPeer whose
    /// broker is stopped first can crash in libmosquitto's own loop thread
    /// (`mosquitto_loop`, loop.c:167) at teardown with the static 2.0.21.
    static func tearDown(_ peer: TestPeer, _ broker: TestBroker) {
        peer.disconnect()
        withExtendedLifetime(broker) {}
    }

    @Test func row3_a64MiBCommandNeverReachesTheSpeakersMemory() throws {
        let broker = try TestBroker()
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "big", logLevel: "info",
                                         mqttConfig: #""homeAssistant":{"enabled":false}"#)
        let root = speaker.topicRoot
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        // Not `\(root)/#`: the peer would receive its own 64 MiB command.
        try peer.subscribe("\(root)/availability")
        try peer.subscribe("\(root)/command/result")
        #expect(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil)
        let before = try #require(residentKiB(pid: speaker.process.pid, field: "VmHWM:"))
        // Sent by mosquitto_pub in its own process: an in-process TestPeer that
        // publishes 64 MiB can crash its own libmosquitto loop thread at teardown.
        try runShell("head -c \(64 << 20) /dev/zero | tr '\\0' '{' | mosquitto_pub -h 127.0.0.1 -p \(broker.port) -q 1 -t '\(root)/command' -s",
                     logPath: speaker.directory + "/pub.log")
        try peer.publish(topic: "\(root)/command", string: #"{"id":"after","action":"volumeUp"}"#)
        let after = peer.waitForMessage(topic: "\(root)/command/result", timeout: 60) { $0.payloadString.contains("\"after\"") }
        #expect(after != nil, "\(speaker.log)")
        let peak = try #require(residentKiB(pid: speaker.process.pid, field: "VmHWM:"))
        print("row 3: speaker peak RSS \(before) KiB before, \(peak) KiB after a 64 MiB command (+\(peak - before) KiB)")
        #expect(peak - before < 4096, "peak RSS grew by \(peak - before) KiB")
        #expect(speaker.process.isRunning)
        Self.tearDown(peer, broker)
    }

    @Test func row5_aResponseTopicOnTheSpeakersOwnSessionIsRefused() throws {
        let broker = try TestBroker()
        let speaker = try SpeakerProcess(brokerPort: broker.port, deviceID: "rt", logLevel: "info",
                                         mqttConfig: #""homeAssistant":{"enabled":false}"#)
        let root = speaker.topicRoot
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("\(root)/#")
        #expect(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil)
        let sessions = peer.messages(on: "\(root)/session").count
        try peer.publish(topic: "\(root)/command", string: #"{"id":"evil","action":"volumeUp"}"#,
                         responseTopic: "\(root)/session", correlationData: [1])
        let result = peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains("\"evil\"") }
        #expect(result?.payloadString.contains(#""code":"malformed""#) == true, "\(String(describing: result?.payloadString))")
        #expect(peer.messages(on: "\(root)/session").count == sessions, "nothing was published on session")
        Self.tearDown(peer, broker)
    }

    @Test func row13_aBrokerThatIsNotThereIsNamedOnceAtWarning() throws {
        let port = try FreePort.find()  // nothing listens
        let speaker = try SpeakerProcess(brokerPort: port, deviceID: "alone", logLevel: "info",
                                         mqttConfig: #""homeAssistant":{"enabled":false}"#)
        let needle = "not connected to the broker: the broker's port refuses connections: Connection refused"
        // The first attempts come 0.5 s, then about 1 s and 2 s apart: 5 s holds several.
        #expect(waitForLog(speaker, timeout: 10) { $0.contains(needle) }, "\(speaker.log)")
        _ = waitForLog(speaker, timeout: 4) { _ in false }  // several more refused attempts
        #expect(Self.count(needle, in: speaker.log) == 1, "\(speaker.log)")
        #expect(speaker.log.contains("<4>main: " + needle), "logged at warning (<4>): \(speaker.log)")
    }
}

/// A `/proc/PID/status` field in KiB (`VmHWM:` peak, `VmRSS:` current).
func residentKiB(pid: pid_t, field: String) -> Int? {
    guard let text = try? FileIO.readText(path: "/proc/\(pid)/status", maxBytes: 65_536) else { return nil }
    guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}
