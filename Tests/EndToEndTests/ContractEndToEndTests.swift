// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpeakerProtocol
import Testing
import TestSupport

/// mqtt-contract.md against the built binary and a real mosquitto: every
/// command field and error code, duplicates and replays, relative vs
/// absolute, Home Assistant discovery, and every payload seen checked
/// against docs/asyncapi.json.
@Suite(.serialized) struct ContractEndToEndTests {
    static func parse(_ m: ReceivedMessage?) -> JSONValue? { m.flatMap { try? JSONParser().parse($0.payload) } }

    /// docs/asyncapi.json, found from this source file's location.
    static func asyncAPI() throws -> SchemaValidator {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/asyncapi.json")
        let bytes = try [UInt8](Data(contentsOf: docs))
        return SchemaValidator(document: try JSONParser().parse(bytes))
    }

    /// Validates every message `peer` saw on the speaker's topics (and its
    /// Home Assistant config) against the AsyncAPI message schemas; returns
    /// how many were checked.
    static func validateAll(_ peer: TestPeer, root: String, deviceID: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
        let api = try asyncAPI()
        let channels: [(String, String)] = [
            ("\(root)/device", "device"), ("\(root)/session", "session"), ("\(root)/catalog", "catalog"),
            ("\(root)/schedules", "schedules"),
            ("\(root)/command/result", "result"), ("\(root)/event", "event"), ("\(root)/command", "command"),
            ("homeassistant/device/\(deviceID)/config", "discovery"),
        ]
        var checked = 0
        for (topic, message) in channels {
            let schema = try #require(api.resolve("#/components/messages/\(message)/payload"))
            for m in peer.messages(on: topic) where !m.payload.isEmpty {
                guard let value = try? JSONParser(allowNonFiniteLiterals: message == "command").parse(m.payload) else {
                    if message != "command" { Issue.record("unparseable payload on \(topic): \(m.payloadString)", sourceLocation: sourceLocation) }
                    continue
                }
                if message == "command" { continue }  // commands are ours, including deliberately bad ones
                let problems = api.problems(value, schema)
                #expect(problems.isEmpty, "\(topic): \(problems) in \(m.payloadString)", sourceLocation: sourceLocation)
                checked += 1
            }
        }
        let availability = try #require(api.resolve("#/components/messages/availability/payload"))
        for m in peer.messages(on: "\(root)/availability") {
            #expect(api.problems(.string(m.payloadString), availability).isEmpty, sourceLocation: sourceLocation)
            checked += 1
        }
        return checked
    }

    /// Sends a command and waits for its result; for an accepted one also for
    /// the `session` whose revision it names (the result leaves just before
    /// that `session`), as a client that reads the state after a result must.
    static func send(_ peer: TestPeer, _ root: String, _ id: String, _ body: String, timeout: Double = 10) throws -> JSONValue? {
        let marker = Monotonic.nanoseconds()
        try peer.publish(topic: "\(root)/command", string: body)
        let result = parse(peer.waitForMessage(topic: "\(root)/command/result", timeout: timeout) {
            $0.receivedAtNanoseconds >= marker && (parse($0)?["id"] == .string(id) || (id.isEmpty && parse($0)?["id"] == .null))
        })
        #expect(peer.waitForSession(under: root, namedBy: result, timeout: timeout), "no session with the revision of \(id)'s result")
        return result
    }

    static func code(_ v: JSONValue?) -> String? { v?["error"]?["code"]?.stringValue }

    /// Each change has a greater revision than the one before; the same
    /// payload may be re-sent unchanged (the republish after a connect).
    static func revisionsIncrease(_ messages: [ReceivedMessage], sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var last: (revision: Double, payload: [UInt8])? = nil
        for m in messages {
            guard let revision = parse(m)?["revision"]?.numberValue else { continue }
            if let last, !(revision > last.revision || (revision == last.revision && m.payload == last.payload)) {
                Issue.record("revision \(revision) after \(last.revision): \(m.payloadString)", sourceLocation: sourceLocation)
                return false
            }
            last = (revision, m.payload)
        }
        return true
    }

    @Test func everyCommandAndErrorCodeDuplicatesReplaysAndTheSchema() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("#")
        let speaker = try SpeakerProcess(brokerPort: broker.port, extraConfig: #""volume":{"initialLevel":0.4,"step":0.05,"maxLevel":0.9}"#)
        let root = speaker.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        let discovery = Self.parse(peer.waitForMessage(topic: "homeassistant/device/e2e/config"))
        #expect(discovery?["components"]?["volume"]?["platform"] == .string("number"))
        #expect(discovery?["components"]?["volume"]?["max"] == .number(90) && discovery?["components"]?["volume"]?["unit_of_measurement"] == .string("%"))

        var r = try Self.send(peer, root, "c-play", #"{"id":"c-play","action":"play"}"#)
        #expect(r?["ok"] == .bool(true))
        let playRevision = r?["revision"]
        r = try Self.send(peer, root, "c-sel", #"{"id":"c-sel","action":"select","soundID":"rain"}"#)
        #expect(r?["ok"] == .bool(true))
        #expect(Self.parse(peer.messages(on: "\(root)/session").last)?["soundID"] == .string("rain"))
        #expect(Self.code(try Self.send(peer, root, "c-nosound", #"{"id":"c-nosound","action":"select","soundID":"jazz"}"#)) == "unknown-sound")
        #expect(Self.code(try Self.send(peer, root, "c-nosoundid", #"{"id":"c-nosoundid","action":"select"}"#)) == "malformed")
        for (id, action) in [("c-next", "next"), ("c-prev", "previous"), ("c-toggle", "toggle"), ("c-pause", "pause"), ("c-play2", "play")] {
            #expect(try Self.send(peer, root, id, #"{"id":"\#(id)","action":"\#(action)"}"#)?["ok"] == .bool(true), "\(action)")
        }
        // Volume: set, clamp to maxLevel (reported), steps, and the rejections.
        #expect(try Self.send(peer, root, "v-1", #"{"id":"v-1","action":"setVolume","level":0.3}"#)?["level"] == .number(0.3))
        #expect(try Self.send(peer, root, "v-2", #"{"id":"v-2","action":"setVolume","level":7}"#)?["level"] == .number(0.9))
        #expect(try Self.send(peer, root, "v-3", #"{"id":"v-3","action":"setVolume","level":-1}"#)?["level"] == .number(0))
        #expect(try Self.send(peer, root, "v-4", #"{"id":"v-4","action":"volumeUp","steps":3}"#)?["level"] == .number(0.15))
        #expect(try Self.send(peer, root, "v-5", #"{"id":"v-5","action":"volumeDown"}"#)?["level"] == .number(0.1))
        let before = Self.parse(peer.messages(on: "\(root)/session").last)?["revision"]
        #expect(Self.code(try Self.send(peer, root, "v-nan", #"{"id":"v-nan","action":"setVolume","level":NaN}"#)) == "invalid-value")
        #expect(Self.code(try Self.send(peer, root, "v-inf", #"{"id":"v-inf","action":"setVolume","level":Infinity}"#)) == "invalid-value")
        #expect(Self.code(try Self.send(peer, root, "v-21", #"{"id":"v-21","action":"volumeUp","steps":21}"#)) == "invalid-value")
        #expect(Self.code(try Self.send(peer, root, "v-str", #"{"id":"v-str","action":"setVolume","level":"loud"}"#)) == "malformed")
        #expect(Self.code(try Self.send(peer, root, "x-1", #"{"id":"x-1","action":"dance"}"#)) == "unknown-action")
        let notJSON = try Self.send(peer, root, "", "not json")
        #expect(Self.code(notJSON) == "malformed" && notJSON?["id"] == .null)
        let big = try Self.send(peer, root, "", #"{"id":"big","action":"play","pad":""# + String(repeating: "a", count: 5000) + #""}"#)
        #expect(Self.code(big) == "too-large" && big?["id"] == .null, "the id is not read from an oversize payload")
        _ = peer.waitForMessage(topic: "never", timeout: 0.3)
        #expect(Self.parse(peer.messages(on: "\(root)/session").last)?["revision"] == before, "a rejected command changed state")

        // Duplicate id (even with a different body): the stored result again, nothing re-applied.
        let first = peer.messages(on: "\(root)/command/result").first { Self.parse($0)?["id"] == .string("c-play") }
        let again = try Self.send(peer, root, "c-play", #"{"id":"c-play","action":"stop"}"#)
        #expect(again == Self.parse(first) && again?["revision"] == playRevision)
        #expect(Self.parse(peer.messages(on: "\(root)/session").last)?["isPlaying"] == .bool(true), "the duplicate must not stop playback")
        // Out of order and replayed: o-2 before o-1, then o-2 and o-1 replayed: applied once each.
        #expect(try Self.send(peer, root, "o-2", #"{"id":"o-2","action":"volumeUp","steps":2}"#)?["level"] == .number(0.2))
        #expect(try Self.send(peer, root, "o-1", #"{"id":"o-1","action":"volumeDown","steps":1}"#)?["level"] == .number(0.15))
        #expect(try Self.send(peer, root, "o-2", #"{"id":"o-2","action":"volumeUp","steps":2}"#)?["level"] == .number(0.2))
        #expect(try Self.send(peer, root, "o-1", #"{"id":"o-1","action":"volumeDown","steps":1}"#)?["level"] == .number(0.15))
        _ = peer.waitForMessage(topic: "never", timeout: 0.3)
        #expect(Self.parse(peer.messages(on: "\(root)/device").last)?["volume"]?["level"] == .number(0.15))

        // MQTT v5 response topic + correlation data.
        try peer.publish(topic: "\(root)/command", string: #"{"id":"rt-1","action":"volumeUp"}"#,
                         responseTopic: "phone/replies", correlationData: [0xCA, 0xFE])
        let reply = peer.waitForMessage(topic: "phone/replies", timeout: 10)
        #expect(reply?.correlationData == [0xCA, 0xFE] && Self.parse(reply)?["id"] == .string("rt-1"))

        // Stop ends the session: ended true, isPlaying false, retained.
        #expect(try Self.send(peer, root, "c-stop", #"{"id":"c-stop","action":"stop"}"#)?["ok"] == .bool(true))
        let ended = Self.parse(peer.messages(on: "\(root)/session").last)
        #expect(ended?["ended"] == .bool(true) && ended?["isPlaying"] == .bool(false))

        // Home Assistant restarts: discovery is sent again, once per burst of `online` (after a random 0.5–3 s delay).
        let marker = Monotonic.nanoseconds()
        for _ in 0..<1000 { try peer.publish(topic: "homeassistant/status", string: "online", qos: 0) }
        #expect(peer.waitForMessage(topic: "homeassistant/device/e2e/config", timeout: 10) { $0.receivedAtNanoseconds >= marker } != nil,
                "discovery not re-sent on homeassistant/status online")
        let births = try #require(peer.wait(timeout: 20) { all -> [ReceivedMessage]? in
            let seen = all.filter { $0.topic == "homeassistant/status" && $0.receivedAtNanoseconds >= marker }
            return seen.count == 1000 ? seen : nil
        })
        _ = peer.waitForMessage(topic: "\(root)/never", timeout: 3.5)  // the longest delay after the last one
        let resends = peer.messages(on: "homeassistant/device/e2e/config").filter { $0.receivedAtNanoseconds >= marker }.count
        // One burst is one re-send (HomeAssistantResendTests proves it on manual time). Here the speaker
        // may take longer than the shortest delay (0.5 s) to read 1,000 messages on a loaded machine,
        // and then legitimately sees several bursts: the bound is that they are coalesced at all.
        let burstMs = Int((births.last!.receivedAtNanoseconds - births.first!.receivedAtNanoseconds) / 1_000_000)
        #expect(resends >= 1 && resends <= 10, "\(resends) re-sends for 1,000 online messages over \(burstMs) ms")
        print("1000 homeassistant/status online over \(burstMs) ms gave \(resends) discovery re-send(s)")

        // Exactly one result per command id (the two replays and the duplicate add one each).
        let results = peer.messages(on: "\(root)/command/result").compactMap { Self.parse($0)?["id"]?.stringValue }
        for id in Set(results) {
            let expected = ["c-play", "o-1", "o-2"].contains(id) ? 2 : 1
            #expect(results.filter { $0 == id }.count == expected, "results for \(id)")
        }
        #expect(Self.revisionsIncrease(peer.messages(on: "\(root)/session")))
        let checked = try Self.validateAll(peer, root: root, deviceID: "e2e")
        print("validated \(checked) real payloads against docs/asyncapi.json")
        #expect(checked > 40)
    }

    @Test func relativeDeviceHasNoLevelAndRefusesSetVolume() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("#")
        let speaker = try SpeakerProcess(brokerPort: broker.port, extraConfig: #""volume":{"mode":"gpio-step"}"#)
        let root = speaker.topicRoot
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(speaker.log)")
        let device = Self.parse(peer.messages(on: "\(root)/device").last)
        #expect(device?["volume"] == .object([("control", .string("relative"))]))
        let session = Self.parse(peer.messages(on: "\(root)/session").last)
        #expect(session?["commands"].map { if case .array(let a) = $0 { return !a.contains(.string("setVolume")) } else { return false } } == true)
        let r = try Self.send(peer, root, "s-1", #"{"id":"s-1","action":"setVolume","level":0.5}"#)
        #expect(Self.code(r) == "unsupported")
        let up = try Self.send(peer, root, "s-2", #"{"id":"s-2","action":"volumeUp","steps":3}"#)
        #expect(up?["ok"] == .bool(true) && up?["level"] == nil, "no level is invented for a relative device")
        #expect(try Self.send(peer, root, "s-3", #"{"id":"s-3","action":"volumeDown"}"#)?["ok"] == .bool(true))
        let discovery = Self.parse(peer.waitForMessage(topic: "homeassistant/device/e2e/config"))
        #expect(discovery?["components"]?["volume"] == .object([("platform", .string("number"))]))
        // Discovery (without the volume number) reached Home Assistant before the `device` that has no level.
        let order = peer.allMessages.map(\.topic)
        let firstDiscovery = order.firstIndex(of: "homeassistant/device/e2e/config")
        let firstDevice = order.firstIndex(of: "\(root)/device")
        #expect(firstDiscovery != nil && firstDevice != nil && firstDiscovery! < firstDevice!, "\(order.prefix(8))")
        #expect(discovery?["components"]?["volume_up"]?["platform"] == .string("button"))
        // The amp got the pulses.
        // The amp got the steps (pending up and down pulses may cancel out: net +2).
        func net(_ reply: String) -> Int? {
            let parts = reply.split(separator: " ").compactMap { $0.split(separator: "=").last.flatMap { Int($0) } }
            return parts.count == 2 ? parts[0] - parts[1] : nil
        }
        var pulses = ""
        for _ in 0..<50 where net(pulses) != 2 {
            pulses = try speaker.control("pulses")
            _ = peer.waitForMessage(topic: "never", timeout: 0.1)
        }
        #expect(net(pulses) == 2, "\(pulses)")
        #expect(try Self.validateAll(peer, root: root, deviceID: "e2e") > 5)
    }

    @Test func revisionKeepsIncreasingAcrossRestartAndKill9() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let stateDirectory = try TemporaryDirectory(prefix: "speaker-state")
        let state = stateDirectory.path
        defer { withExtendedLifetime(stateDirectory) {} }  // removed only when the test is done
        let root = "ambient-speaker/e2e"
        var highest = 0.0
        func revisions() -> [Double] { peer.messages(on: "\(root)/session").compactMap { Self.parse($0)?["revision"]?.numberValue } }

        for (round, ending) in ["SIGTERM", "SIGKILL", "SIGKILL"].enumerated() {
            peer.clear()
            let speaker = try SpeakerProcess(brokerPort: broker.port, stateDirectory: state)
            try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" && !$0.retain } != nil,
                         "round \(round): \(speaker.log)")
            let firstLive = peer.messages(on: "\(root)/session").filter { !$0.retain }.compactMap { Self.parse($0)?["revision"]?.numberValue }.first
            #expect((firstLive ?? 0) > highest, "round \(round): revision \(firstLive ?? 0) after \(highest)")
            for i in 0..<5 {
                _ = try Self.send(peer, root, "r\(round)-\(i)", #"{"id":"r\#(round)-\#(i)","action":"volumeUp"}"#)
            }
            #expect(Self.revisionsIncrease(peer.messages(on: "\(root)/session").filter { !$0.retain }))
            highest = max(highest, revisions().max() ?? 0)
            speaker.process.send(ending == "SIGTERM" ? SIGTERM : SIGKILL)
            #expect(speaker.process.waitForExit(timeout: 10) != nil)
        }
        print("revision after a restart and two kill -9: \(highest)")
    }
}

extension TestPeer {
    /// Waits for the `session` whose revision a good `result` names (the
    /// speaker sends the result just before it); true at once for a result
    /// that names none.
    func waitForSession(under root: String, namedBy result: JSONValue?, timeout: Double = 10) -> Bool {
        guard result?["ok"] == .bool(true), let revision = result?["revision"] else { return true }
        return waitForMessage(topic: "\(root)/session", timeout: timeout) {
            (try? JSONParser().parse($0.payload))?["revision"] == revision
        } != nil
    }
}
