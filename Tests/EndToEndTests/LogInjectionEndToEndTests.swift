// SPDX-License-Identifier: Apache-2.0
import SpeakerProtocol
import Testing
import TestSupport

/// Log injection, end to end: hostile commands whose action, id, sound id
/// or duplicate keys carry newlines, `<N>` priorities, NULs and terminal
/// escapes leave exactly one well-formed line each in the speaker's log.
@Suite(.serialized) struct LogInjectionEndToEndTests {
    @Test func hostileCommandTextCannotForgeLogLines() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        let speaker = try SpeakerProcess(brokerPort: broker.port, logLevel: "debug", mqttConfig: #""homeAssistant":{"enabled":false}"#)
        let root = speaker.topicRoot
        try peer.subscribe("\(root)/#")
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil)
        let hostile = [
            #"{"id":"a1","action":"x\n<0>main: FORGED-ACTION"}"#,
            #"{"id":"a2","action":"select","soundID":"r\n<1>main: FORGED-SOUND\u0000\u001b[2J"}"#,
            #"{"id":"a3","action":"play","id":"x\n<2>main: FORGED-DUP"}"#,
            #"{"id":"a4\n<3>main: FORGED-ID","action":"play"}"#,
            "{\"id\":\"a5\",\"action\":\"\u{1B}]0;title\u{07}\r<0>main: FORGED-RAW\"}",
        ]
        for payload in hostile { try peer.publish(topic: "\(root)/command", string: payload) }
        try peer.publish(topic: "\(root)/command", string: #"{"id":"last","action":"volumeUp"}"#)
        #expect(peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains(#""last""#) } != nil)
        let results = peer.messages(on: "\(root)/command/result").count
        #expect(results == hostile.count + 1, "every command got one result")
        let lines = speaker.log.split(separator: "\n", omittingEmptySubsequences: false)
        let forged = lines.filter { $0.contains("FORGED") && !$0.hasPrefix("<5>main: ") && !$0.hasPrefix("<7>main: ") }
        #expect(forged.isEmpty, "forged lines: \(forged)")
        #expect(lines.contains { $0.hasPrefix("<5>main: ") && $0.contains(#"x\n<0>main: FORGED-ACTION"#) }, "the hostile text is logged, escaped, on the speaker's own line")
        #expect(!speaker.log.utf8.contains(0) && !speaker.log.utf8.contains(0x1B) && !speaker.log.utf8.contains(0x0D))
        #expect(lines.allSatisfy { $0.isEmpty || ($0.first == "<" && $0.dropFirst(2).first == ">") }, "every line starts with a priority")
    }
}
