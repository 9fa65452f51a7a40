// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import SpeakerProtocol

/// Mixes end to end: a mix saved over MQTT (real mosquitto), selected and
/// heard in the file pcm, one layer's level changed and heard, the speaker
/// restarted with the same state directory and the mix found again.
@Suite(.serialized) struct MixesEndToEndTests {
    func json(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    func rms(_ speaker: SpeakerProcess, frames: Int = 4800) -> Double {
        let samples = speaker.pcmSamples().suffix(frames * 2)
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot() / 32768
    }

    func pause(_ peer: TestPeer, seconds: Double) { _ = peer.waitForMessage(topic: "never", timeout: seconds) }

    func result(_ peer: TestPeer, _ root: String, _ id: String) -> JSONValue? {
        json(peer.waitForMessage(topic: "\(root)/command/result", timeout: 10) { $0.payloadString.contains("\"\(id)\"") })
    }

    @Test func saveSelectChangeALayerRestartAndFindTheMixAgain() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let state = try makeTemporaryDirectory(prefix: "speaker-mixes")
        defer { _ = try? runShell("rm -rf '\(state)'", logPath: "/dev/null") }
        let root = "ambient-speaker/e2e"
        do {
            let speaker = try SpeakerProcess(brokerPort: broker.port, stateDirectory: state)
            try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
            try peer.publish(topic: "\(root)/command", string: #"{"id":"m1","action":"saveMix","mixID":"duo","name":"Duo","summary":"White over pink","layers":[{"soundID":"white","level":1},{"soundID":"pink","level":0.5}]}"#)
            #expect(result(peer, root, "m1")?["ok"] == .bool(true), "\(speaker.log)")
            let catalog = json(peer.waitForMessage(topic: "\(root)/catalog", timeout: 10) { $0.payloadString.contains("duo") })
            #expect(catalog?.jsonText.contains(#"{"id":"duo","name":"Duo","summary":"White over pink","kind":"mix","layers":[{"soundID":"white","level":1},{"soundID":"pink","level":0.5}]}"#) == true,
                    "\(catalog?.jsonText ?? "no catalog")")

            try peer.publish(topic: "\(root)/command", string: #"{"id":"m2","action":"select","soundID":"duo"}"#)
            let selected = json(peer.waitForMessage(topic: "\(root)/session", timeout: 10) {
                $0.payloadString.contains(#""soundID":"duo""#) && $0.payloadString.contains(#""isPlaying":true"#)
            })
            #expect(selected?["soundName"] == .string("Duo"))
            #expect(selected?["layers"]?.jsonText == #"[{"soundID":"white","level":1},{"soundID":"pink","level":0.5}]"#)
            #expect(selected?["commands"]?.jsonText.contains("setLayerLevel") == true)
            pause(peer, seconds: 0.6)
            let both = rms(speaker)
            #expect(both > 0.001, "the mix is heard: RMS \(both)")

            try peer.publish(topic: "\(root)/command", string: #"{"id":"m3","action":"setLayerLevel","soundID":"white","level":0}"#)
            #expect(result(peer, root, "m3")?["ok"] == .bool(true))
            let changed = json(peer.waitForMessage(topic: "\(root)/session", timeout: 10) { $0.payloadString.contains(#""level":0}"#) })
            #expect(changed?["layers"]?.jsonText == #"[{"soundID":"white","level":0},{"soundID":"pink","level":0.5}]"#)
            pause(peer, seconds: 0.6)
            let pinkOnly = rms(speaker)
            print("mix RMS in the pcm: both layers \(both), white at 0 \(pinkOnly)")
            #expect(pinkOnly > 0 && pinkOnly < both * 0.3, "white silenced: RMS \(both) → \(pinkOnly)")

            try peer.publish(topic: "\(root)/command", string: #"{"id":"m4","action":"setLayerLevel","soundID":"rain","level":0.5}"#)
            #expect(result(peer, root, "m4")?["error"]?["code"] == .string("unknown-sound"))
            speaker.process.send(SIGTERM)
            #expect(speaker.process.waitForExit(timeout: 10) == 0, "\(speaker.log)")
            // Every catalog, session, device and result seen matches docs/asyncapi.json.
            #expect(try ContractEndToEndTests.validateAll(peer, root: root, deviceID: "e2e") > 5)
        }
        peer.clear()
        let again = try SpeakerProcess(brokerPort: broker.port, stateDirectory: state)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil,
                     "\(again.log)")
        let catalog = json(peer.waitForMessage(topic: "\(root)/catalog", timeout: 10))
        #expect(catalog?.jsonText.contains(#""id":"duo","name":"Duo""#) == true, "the saved mix is back: \(catalog?.jsonText ?? "none")")
        #expect(catalog?.jsonText.contains(#"{"soundID":"white","level":1}"#) == true, "setLayerLevel did not change the preset")
        let session = json(peer.waitForMessage(topic: "\(root)/session", timeout: 10))
        #expect(session?["soundID"] == .string("duo"), "the selected mix is restored: \(session?.jsonText ?? "none")")
        try peer.publish(topic: "\(root)/command", string: #"{"id":"m5","action":"deleteMix","mixID":"duo"}"#)
        #expect(result(peer, root, "m5")?["error"]?["code"] == .string("unsupported"), "the selected mix cannot be deleted")
        again.process.send(SIGTERM)
        #expect(again.process.waitForExit(timeout: 10) == 0)
        #expect(try ContractEndToEndTests.validateAll(peer, root: root, deviceID: "e2e") > 3)
    }
}
