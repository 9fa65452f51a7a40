// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerProtocol

/// The documented broker setup (board/mosquitto: a user per speaker, the
/// ACL, the user name as client id) on a real mosquitto, the speaker on TLS
/// with its own password: the speaker works for Home Assistant's user, and a
/// client holding another speaker's credentials can neither command it,
/// publish as it, read it, nor take over its session.
@Suite(.serialized) struct BrokerACLEndToEndTests {
    static var repository: String {
        let file = String(#filePath)
        guard let range = file.firstRange(of: "/Tests/EndToEndTests/") else { return "." }
        return String(file[..<range.lowerBound])
    }

    @Test func theDocumentedACLKeepsEachSpeakerToItself() throws {
        let dir = try makeTemporaryDirectory(prefix: "test-acl")
        defer { _ = try? runShell("rm -rf '\(dir)'", logPath: "/dev/null") }
        let bedroomPassword = "bedroom-Secret-2"
        let passwords = ["homeassistant": "ha-Secret-1", "bedroom": bedroomPassword, "kitchen": "kitchen-Secret-3"]
        try runShell(passwords.sorted { $0.key < $1.key }.enumerated().map { i, p in
            "mosquitto_passwd -b \(i == 0 ? "-c " : "")'\(dir)/passwd' \(p.key) '\(p.value)'"
        }.joined(separator: " && ") + " && chmod 644 '\(dir)/passwd' && printf %s '\(bedroomPassword)' >'\(dir)/bedroom.pw' && chmod 600 '\(dir)/bedroom.pw'"
                     + " && cp '\(Self.repository)/board/mosquitto/ambient-speaker.acl' '\(dir)/acl' && chmod 644 '\(dir)/acl'",
                     logPath: dir + "/setup.log")
        let pki = try TestCertificates()
        let broker = try TestBroker(extraConfig: ["per_listener_settings false", "password_file \(dir)/passwd", "acl_file \(dir)/acl",
                                                  "use_username_as_clientid true"],
                                    anonymous: false,
                                    secondListener: ["cafile \(pki.caFile)", "certfile \(pki.serverCert)", "keyfile \(pki.serverKey)"])
        let tlsPort = try #require(broker.secondPort)
        let ha = try TestPeer(port: broker.port, clientID: "ha", username: "homeassistant", password: passwords["homeassistant"])
        try ha.connect()
        try ha.subscribe("ambient-speaker/bedroom/#")
        try ha.subscribe("homeassistant/#")
        let speaker = try SpeakerProcess(brokerPort: tlsPort, deviceID: "bedroom",
                                         mqttConfig: #""username":"bedroom","passwordFile":"\#(dir)/bedroom.pw","tls":{"caFile":"\#(pki.caFile)"}"#)
        let root = speaker.topicRoot
        try #require(ha.waitForMessage(topic: "\(root)/availability", timeout: 20) { $0.payloadString == "online" } != nil,
                     "the speaker never came online:\n\(speaker.log)\n\(broker.log)")
        #expect(ha.waitForMessage(topic: "homeassistant/device/bedroom/config", timeout: 10) != nil, "discovery allowed")
        #expect(!speaker.log.contains("without TLS"), "TLS: no clear-text warning")

        // Home Assistant commands the speaker.
        try ha.publish(topic: "\(root)/command", string: #"{"id":"ha-play","action":"play"}"#)
        #expect(ha.waitForMessage(topic: "\(root)/command/result") { $0.payloadString.contains("ha-play") && $0.payloadString.contains("\"ok\":true") } != nil,
                "\(speaker.log)")

        // The kitchen's credentials, with the bedroom speaker's client id.
        let rogue = try TestPeer(port: broker.port, clientID: "ambient-speaker-bedroom", username: "kitchen", password: passwords["kitchen"])
        try rogue.connect()
        try? rogue.subscribe("ambient-speaker/bedroom/#")  // granted or refused: either way nothing may arrive
        try rogue.publish(topic: "\(root)/command", string: #"{"id":"rogue-pause","action":"pause"}"#)
        try rogue.publish(topic: "\(root)/availability", string: "offline", retain: true)
        try rogue.publish(topic: "\(root)/session", string: #"{"isPlaying":false}"#, retain: true)
        try rogue.publish(topic: "homeassistant/device/bedroom/config", string: "", retain: true)
        #expect(rogue.waitForPublishes(timeout: 5))
        // A marker after them: when its result arrives, the rogue's messages would have too.
        try ha.publish(topic: "\(root)/command", string: #"{"id":"ha-marker","action":"play"}"#)
        #expect(ha.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains("ha-marker") } != nil,
                "the speaker still answers (its session was not taken over):\n\(speaker.log)")
        #expect(!ha.messages(on: "\(root)/command/result").contains { $0.payloadString.contains("rogue-pause") }, "the rogue command was not obeyed")
        #expect(!ha.messages(on: "\(root)/availability").contains { $0.payloadString == "offline" }, "no offline as the speaker")
        #expect(!ha.messages(on: "\(root)/session").contains { $0.payloadString == #"{"isPlaying":false}"# }, "no session as the speaker")
        #expect(!ha.messages(on: "homeassistant/device/bedroom/config").contains { $0.payload.isEmpty }, "no discovery removal")
        #expect(ha.messages(on: "\(root)/command").allSatisfy { !$0.payloadString.contains("rogue") })
        #expect(rogue.allMessages.isEmpty, "the rogue reads nothing of the bedroom: \(rogue.allMessages.map(\.topic))")
        #expect(!speaker.log.contains("disconnected from the broker"), "\(speaker.log)")
        let denied = broker.log.split(separator: "\n").filter { $0.contains("Denied PUBLISH") }
        #expect(denied.count >= 4, "the broker denied the rogue's publishes:\n\(broker.log)")
        print("broker ACL: \(denied.count) rogue publishes denied, the speaker kept its session and obeyed only Home Assistant")
    }
}
