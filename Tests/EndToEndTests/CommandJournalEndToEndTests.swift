// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerProtocol
import TestSupport

/// Every command the broker delivered is answered — exactly once across a
/// stop, at least once (a repeat is the same result) across a crash — on a
/// slow board: 1,000 QoS 1 commands at full rate against
/// a speaker held to a quarter of a core (`CPUThrottle`), SIGTERM or kill -9
/// in the middle of the backlog, then a second process on the same state
/// directory. "Delivered" is what the broker itself logged: each PUBACK it
/// received from the speaker's client. With the command journal off
/// (`AMBIENT_SPEAKER_COMMAND_JOURNAL=off`) the same run loses commands,
/// which the last test shows.
@Suite struct CommandJournalEndToEndTests {
    static let commands = 1000
    static let root = "ambient-speaker/e2e"

    /// What one run saw.
    struct Outcome {
        var sent = 0
        /// PUBACKs the broker logged from the speaker (commands it delivered).
        var delivered = 0
        var unanswered: [String] = []
        var answeredTwice: [String] = []
        /// Commands whose results were not all the same (a repeat must be the same result).
        var answeredDifferently: [String] = []
        var expired = 0
        /// The first process's "stopped in N ms" (SIGTERM runs).
        var stopMs: Int?
        var firstLog = ""
        var secondLog = ""
    }

    /// Command `i`: mostly a volume level no other command sets (so a level
    /// tells which command made it), every tenth a `toggle`, which waits for
    /// the engine and so is held in progress when the stop or crash comes.
    static func payload(_ i: Int) -> String {
        i % 10 == 9 ? #"{"id":"j\#(i)","action":"toggle"}"#
            : #"{"id":"j\#(i)","action":"setVolume","level":\#(Double(i + 1) / 10_000)}"#
    }

    static func run(signal: Int32, journal: Bool = true) throws -> Outcome {
        // Every command queued for the persistent session is kept (the default queue is 1,000).
        let broker = try TestBroker(extraConfig: ["max_queued_messages 5000", "set_tcp_nodelay true"])
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("\(root)/command/result")
        try peer.subscribe("\(root)/availability")
        let stateDirectory = try TemporaryDirectory(prefix: "speaker-journal")
        defer { withExtendedLifetime(stateDirectory) {} }
        let environment = journal ? [] : ["AMBIENT_SPEAKER_COMMAND_JOURNAL=off"]
        var outcome = Outcome()

        let first = try SpeakerProcess(brokerPort: broker.port, stateDirectory: stateDirectory.path, environment: environment)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" && !$0.retain } != nil,
                     "\(first.log)")
        let throttle = try CPUThrottle(pid: first.process.pid, runMs: 4, pauseMs: 12)
        for i in 0..<commands { _ = try peer.publish(topic: "\(root)/command", string: payload(i)) }
        outcome.sent = commands
        // In the middle of the backlog: a quarter of it answered.
        _ = peer.wait(timeout: 120) { $0.filter { $0.topic == "\(root)/command/result" }.count >= commands / 4 ? true : nil }
        first.process.send(signal)
        let code = first.process.waitForExit(timeout: 120)
        throttle.stop()
        #expect(code == (signal == SIGKILL ? 128 + SIGKILL : 0), "\(first.log)")
        outcome.firstLog = first.log
        if let line = outcome.firstLog.split(separator: "\n").last(where: { $0.contains("stopped in ") }),
           let range = line.range(of: "stopped in ") {
            outcome.stopMs = Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(peer.waitForPublishes(timeout: 60), "the broker acknowledged every command")

        let second = try SpeakerProcess(brokerPort: broker.port, stateDirectory: stateDirectory.path, environment: environment)
        func answered(_ messages: [ReceivedMessage]) -> [String: [JSONValue]] {
            var byID: [String: [JSONValue]] = [:]
            for m in messages where m.topic == "\(root)/command/result" {
                if let result = try? JSONParser().parse(m.payload), let id = result["id"]?.stringValue { byID[id, default: []].append(result) }
            }
            return byID
        }
        // As long as the second process makes progress: under qemu-user it
        // answers the held and redelivered backlog several times slower.
        var answeredSoFar = -1
        while answeredSoFar < commands {
            let before = answeredSoFar
            _ = peer.wait(timeout: 20) { answered($0).count > before ? true : nil }
            answeredSoFar = answered(peer.messages(on: "\(root)/command/result")).count
            if answeredSoFar == before { break }  // nothing new in 20 s
        }
        outcome.delivered = Self.commandsAcknowledged(brokerLog: broker.log, client: "ambient-speaker-e2e",
                                                      topic: "\(root)/command")
        let results = answered(peer.messages(on: "\(root)/command/result"))
        outcome.unanswered = (0..<commands).map { "j\($0)" }.filter { results[$0] == nil }
        outcome.answeredTwice = results.filter { $0.value.count > 1 }.keys.sorted()
        outcome.answeredDifferently = results.filter { Set($0.value.map(\.jsonText)).count > 1 }.keys.sorted()
        outcome.expired = results.values.filter { $0.first?["error"]?["code"] == .string("expired") }.count
        outcome.secondLog = second.log
        let kind = signal == SIGKILL ? "kill -9" : "SIGTERM"
        print("journal \(journal ? "on" : "off"), \(kind) at a quarter of the backlog: sent \(outcome.sent), delivered (broker PUBACKs) "
              + "\(outcome.delivered), answered \(results.count), unanswered \(outcome.unanswered.count), answered twice "
              + "\(outcome.answeredTwice.count) (\(outcome.answeredDifferently.count) differently), expired \(outcome.expired)"
              + (outcome.stopMs.map { ", stop took \($0) ms" } ?? ""))
        return outcome
    }

    /// What the broker counts as delivered to `client` on `topic`, from its
    /// own log (`log_type all`): each PUBACK it received for a message it
    /// sent there, matched by packet id (both processes share the client id
    /// and the broker's session, so ids do not repeat within a run).
    static func commandsAcknowledged(brokerLog: String, client: String, topic: String) -> Int {
        var topicOfMid: [Substring: Substring] = [:]
        var acknowledged = 0
        let sending = "Sending PUBLISH to \(client) (", puback = "Received PUBACK from \(client) (Mid: "
        for line in brokerLog.split(separator: "\n") {
            if let start = line.range(of: sending) {
                // "(d0, q1, r0, m12, 'topic', ... (57 bytes))"
                let fields = line[start.upperBound...]
                guard let m = fields.range(of: ", m"), let quote = fields.range(of: ", '") else { continue }
                let mid = fields[m.upperBound...].prefix { $0.isNumber }
                let rest = fields[quote.upperBound...]
                topicOfMid[mid] = rest.prefix { $0 != "'" }
            } else if let start = line.range(of: puback) {
                let mid = line[start.upperBound...].prefix { $0.isNumber }
                if topicOfMid[mid].map({ $0 == topic[...] }) == true { acknowledged += 1 }
            }
        }
        return acknowledged
    }

    /// Every delivered command answered; after a clean stop exactly once,
    /// after a crash (`repeatsAllowed`) perhaps twice with the same result:
    /// a result the broker had acknowledged after the journal's last write
    /// is sent again by the next process (mqtt-contract.md, "Delivery").
    func expectEveryDeliveredCommandAnswered(_ o: Outcome, repeatsAllowed: Bool = false) {
        #expect(o.delivered == o.sent, "the broker delivered every command once (\(o.delivered) PUBACKs for \(o.sent))")
        #expect(o.unanswered.isEmpty, "unanswered: \(o.unanswered.prefix(20)); first log tail:\n\(o.firstLog.suffix(3000))\nsecond log tail:\n\(o.secondLog.suffix(3000))")
        #expect(o.answeredDifferently.isEmpty, "answered twice with different results: \(o.answeredDifferently.prefix(20))")
        if !repeatsAllowed { #expect(o.answeredTwice.isEmpty, "answered twice: \(o.answeredTwice.prefix(20))") }
    }

    @Test
    func aSlowBoardStoppedMidBacklogAnswersEveryDeliveredCommandOnce() throws {
        let outcome = try Self.run(signal: SIGTERM)
        expectEveryDeliveredCommandAnswered(outcome)
        #expect(outcome.stopMs != nil, "the first process logged its stop time")
    }

    @Test
    func aSlowBoardKilledMidBacklogAnswersEveryDeliveredCommand() throws {
        expectEveryDeliveredCommandAnswered(try Self.run(signal: SIGKILL), repeatsAllowed: true)
    }

    /// The control: the same crash with the journal off loses commands —
    /// those acknowledged to the broker (which never delivers them again)
    /// whose results had not reached it.
    @Test func withTheJournalOffTheSameCrashLosesCommands() throws {
        let outcome = try Self.run(signal: SIGKILL, journal: false)
        #expect(!outcome.unanswered.isEmpty, "with the journal off every command was still answered: the test above would prove nothing")
    }
}
