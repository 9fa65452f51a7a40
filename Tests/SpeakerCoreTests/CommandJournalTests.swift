// SPDX-License-Identifier: Apache-2.0
import Testing
import SpeakerCore
import SpeakerProtocol

/// The command journal in the core: what it holds and when it is written
/// (ahead of everything a dispatch does), a stop that holds new commands,
/// the next process answering what the last one held, and the file's
/// decoding of bad input.
@Suite struct CommandJournalTests {
    /// The harness's wall clock, in milliseconds.
    static let wallMs: Int64 = 1_795_953_600_123

    /// A harness whose speaker starts with `journal` (as loaded from disk).
    func harness(journal: CommandJournal?) -> Harness {
        var h = Harness()
        let env = SpeakerEnvironment(wallClock: { WallClockReading(seconds: 1_795_953_600, milliseconds: 123) },
                                     clockSynced: { true }, newSessionID: { "next-session" }, software: "test")
        h.speaker = Speaker(config: h.speaker.config, catalog: Harness.catalog, environment: env,
                            revisionReservation: 0, epoch: "e1", journal: journal)
        return h
    }

    func journals(_ fx: [SpeakerEffect]) -> [CommandJournal] {
        fx.compactMap { if case .saveJournal(let j) = $0 { return j } else { return nil } }
    }

    func results(_ fx: [SpeakerEffect]) -> [JSONValue] { fx.published("command/result") }

    func started(_ h: inout Harness) {
        h.send(.start(at: h.now))
        h.send(.mqttConnected(at: h.now))
    }

    func held(_ id: String, _ json: String, ageMs: Int64 = 1000, applied: Bool = false) -> HeldCommand {
        HeldCommand(id: id, payload: Array(json.utf8), responseTopic: nil, correlationData: nil,
                    receivedAtMs: Self.wallMs - ageMs, applied: applied)
    }

    @Test func aResultIsOwedOnDiskUntilTheBrokerAcknowledgesIt() {
        var h = harness(journal: nil)
        started(&h)
        let fx = h.command(#"{"id":"v1","action":"setVolume","level":0.5}"#)
        #expect(results(fx).first?["ok"] == .bool(true))
        guard case .saveJournal(let first) = fx.first else {
            Issue.record("the dispatch does not begin with the journal: \(fx.map { EffectLine.of($0) })")
            return
        }
        #expect(first.owed.map(\.id) == ["v1"] && first.held.isEmpty, "owed before its acknowledgement leaves")
        let resultPublication = fx.compactMap { if case .publish(let p) = $0, p.topic.hasSuffix("command/result") { p } else { nil } }
        #expect(resultPublication.map(\.resultID) == ["v1"], "the MQTT service is told which command the result answers")
        let delivered = h.send(.resultsDelivered(["v1"], at: h.now))
        #expect(journals(delivered).isEmpty, "an acknowledged result leaves the file lazily")
        #expect(journals(h.advance(ms: 999)).isEmpty, "written within a second, not before")
        let later = journals(h.advance(ms: 1))
        #expect(later.map { $0.owed.map(\.id) } == [[]] && later.map { $0.answered.compactMap(\.id) } == [["v1"]])
        #expect(journals(h.advance(ms: 5000)).isEmpty, "nothing new, nothing written")
    }

    @Test func theNextProcessSendsTheOwedResultsAgainAndAppliesNothing() {
        let owed = OwedResult(result: .accepted(id: "v1", revision: 9, level: 0.4), responseTopic: "reply/v1",
                              correlationData: [1, 2])
        var h = harness(journal: CommandJournal(deviceID: "kitchen", owed: [owed]))
        h.send(.start(at: h.now))
        let fx = h.send(.mqttConnected(at: h.now))
        #expect(results(fx) == [try? JSONParser().parse(CommandResult.accepted(id: "v1", revision: 9, level: 0.4).serialized())])
        #expect(fx.publications.filter { $0.topic == "reply/v1" && $0.correlationData == [1, 2] }.count == 1,
                "and to the caller's response topic")
        #expect(h.speaker.journalSnapshot.owed == [owed], "still owed until the broker acknowledges it")
        let again = h.command(#"{"id":"v1","action":"setVolume","level":0.9}"#)
        #expect(results(again).first?["revision"] == .number(9), "a redelivery gets the same result, nothing applied")
        #expect(h.state.volume.level != .absolute(level: 0.9))
        h.send(.resultsDelivered(["v1"], at: h.now))
        #expect(h.speaker.journalSnapshot.owed.isEmpty)
        #expect(results(h.send(.mqttConnected(at: h.now))).isEmpty, "sent again once, not at every connection")
    }

    @Test func aCommandInProgressIsJournaledBeforeItsEffectsAndRemovedBeforeItsResult() {
        var h = harness(journal: nil)
        started(&h)
        let fx = h.command(#"{"id":"p1","action":"play"}"#)
        guard case .saveJournal(let first) = fx.first else {
            Issue.record("the dispatch does not begin with the journal: \(fx.map { EffectLine.of($0) })")
            return
        }
        #expect(first.held.map(\.id) == ["p1"] && first.held.first?.applied == true)
        #expect(first.held.first?.receivedAtMs == Self.wallMs)
        #expect(results(fx).isEmpty)
        let done = h.engineDoes(fx)
        guard case .saveJournal(let second) = done.first else {
            Issue.record("the result's dispatch does not begin with the journal: \(done.map { EffectLine.of($0) })")
            return
        }
        #expect(second.held.isEmpty && second.answered.compactMap(\.id) == ["p1"] && second.owed.map(\.id) == ["p1"])
        #expect(results(done).first?["id"] == .string("p1"))
    }

    @Test func aStoppingSpeakerHoldsNewCommandsWithoutApplyingThemAndWritesAtTheEnd() {
        var h = harness(journal: nil)
        started(&h)
        h.command(#"{"id":"a","action":"setVolume","level":0.2}"#)
        h.send(.stopping(at: h.now))
        let fx = h.send(.commands([IncomingCommand(payload: Array(#"{"id":"b","action":"setVolume","level":0.9}"#.utf8)),
                                   IncomingCommand(payload: Array(#"{"id":"c","action":"next"}"#.utf8))], at: h.now))
        #expect(journals(fx).count == 1, "one write for the batch")
        #expect(journals(fx).first?.held.map(\.id) == ["b", "c"])
        #expect(journals(fx).first?.held.allSatisfy { !$0.applied } == true)
        #expect(results(fx).isEmpty && fx.audioRequests.isEmpty, "nothing applied, nothing answered")
        #expect(h.state.volume.level == .absolute(level: 0.2))
        #expect(journals(fx).first?.answered.compactMap(\.id) == ["a"], "the unsaved result goes with it")
        #expect(journals(h.send(.shutdown(at: h.now))).isEmpty, "nothing left unsaved at the stop")
    }

    @Test func theStopWritesWhatIsNotYetOnDisk() {
        var h = harness(journal: nil)
        started(&h)
        h.command(#"{"id":"a","action":"setVolume","level":0.2}"#)
        h.command(#"{"id":"b","action":"setVolume","level":0.3}"#)
        h.send(.resultsDelivered(["a"], at: h.now))
        let end = journals(h.send(.shutdown(at: h.now)))
        #expect(end.map { $0.owed.map(\.id) } == [["b"]], "the acknowledged result leaves the file at the stop, the other stays owed")
        #expect(end.map { $0.answered.compactMap(\.id) } == [["a", "b"]])
    }

    @Test func theNextProcessAppliesAFreshHeldCommandAndExpiresTheRest() {
        let journal = CommandJournal(deviceID: "kitchen", held: [
            held("fresh", #"{"id":"fresh","action":"setVolume","level":0.7}"#, ageMs: 5000),
            held("old", #"{"id":"old","action":"setVolume","level":0.1}"#, ageMs: 31_000),
            held("ahead", #"{"id":"ahead","action":"setVolume","level":0.1}"#, ageMs: -10_000),
            held("half", #"{"id":"half","action":"play"}"#, applied: true),
        ], answered: [.accepted(id: "done", revision: 7, level: 0.3)])
        var h = harness(journal: journal)
        h.send(.start(at: h.now))
        let fx = h.send(.mqttConnected(at: h.now))
        let answers = Dictionary(results(fx).compactMap { r in r["id"]?.stringValue.map { ($0, r) } }, uniquingKeysWith: { a, _ in a })
        #expect(answers.count == 4)
        #expect(answers["fresh"]?["ok"] == .bool(true) && h.state.volume.level == .absolute(level: 0.7))
        for id in ["old", "ahead", "half"] {
            #expect(answers[id]?["error"]?["code"] == .string("expired"), "\(id): \(answers[id]?.jsonText ?? "no result")")
        }
        #expect(fx.audioRequests.allSatisfy { if case .play = $0 { false } else { true } }, "the half-done play is not applied again")
        guard case .saveJournal(let written) = fx.first else {
            Issue.record("the answers are not journaled first: \(fx.map { EffectLine.of($0) })")
            return
        }
        #expect(written.held.isEmpty)
        // A redelivery of an answered command gets its earlier result and changes nothing.
        let again = h.command(#"{"id":"done","action":"setVolume","level":0.9}"#)
        #expect(results(again).first == (try? JSONParser().parse(CommandResult.accepted(id: "done", revision: 7, level: 0.3).serialized())))
        #expect(h.state.volume.level == .absolute(level: 0.7))
        // A redelivery of a command held while the last process stopped is not applied twice.
        let twice = h.command(#"{"id":"fresh","action":"setVolume","level":0.7}"#)
        #expect(results(twice).count == 1 && results(twice).first?["ok"] == .bool(true))
    }

    @Test func heldCommandsWaitForTheConnection() {
        let journal = CommandJournal(deviceID: "kitchen", held: [held("x", #"{"id":"x","action":"setVolume","level":0.6}"#)])
        var h = harness(journal: journal)
        let start = h.send(.start(at: h.now))
        #expect(results(start).isEmpty)
        #expect(h.speaker.journalSnapshot.held.map(\.id) == ["x"], "still held until answered")
        let connected = h.send(.mqttConnected(at: h.now))
        #expect(results(connected).map { $0["id"] } == [.string("x")])
        #expect(results(h.send(.mqttConnected(at: h.now))).isEmpty, "answered once, not at every connection")
    }

    @Test func beyondTheBoundACommandIsExpiredAtOnce() {
        var h = harness(journal: nil)
        started(&h)
        h.send(.stopping(at: h.now))
        let batch = (0..<CommandJournal.maxHeld).map {
            IncomingCommand(payload: Array(#"{"id":"h\#($0)","action":"volumeUp"}"#.utf8))
        }
        h.send(.commands(batch, at: h.now))
        #expect(h.speaker.journalSnapshot.held.count == CommandJournal.maxHeld)
        let over = h.command(#"{"id":"one-too-many","action":"volumeUp"}"#)
        #expect(results(over).first?["error"]?["code"] == .string("expired"))
        #expect(h.speaker.journalSnapshot.held.count == CommandJournal.maxHeld)
    }

    @Test func theFileRoundTripsAndBadFilesAreRefusedWithTheirPath() throws {
        let journal = CommandJournal(deviceID: "kitchen", held: [
            HeldCommand(id: "c1", payload: Array(#"{"id":"c1","action":"play"}"#.utf8), responseTopic: "reply/here",
                        correlationData: [0, 0xff, 0x10], receivedAtMs: Self.wallMs, applied: true)],
            owed: [OwedResult(result: .accepted(id: "o", revision: 4, level: 0.5), responseTopic: nil, correlationData: [7])],
            answered: [.accepted(id: "a", revision: 3, level: nil, fadeSeconds: 60),
                       .rejected(CommandRejection(id: "b", code: .expired, message: "too old"))])
        #expect(try CommandJournal.decode(journal.fileBytes, deviceID: "kitchen") == journal)
        // A file without `owed` owes nothing.
        let noOwed = CommandJournal(deviceID: "kitchen", held: journal.held, answered: journal.answered)
        let withoutMember = String(decoding: noOwed.fileBytes, as: UTF8.self).replacing(#""owed":[],"#, with: "")
        #expect(!withoutMember.contains("owed"))
        #expect(try CommandJournal.decode(Array(withoutMember.utf8), deviceID: "kitchen") == noOwed)
        let text = String(decoding: journal.fileBytes, as: UTF8.self)
        let cases: [(String, String)] = [
            (String(text.prefix(text.count / 2)), "not valid JSON"),
            (text.replacing(#""version":1"#, with: #""version":2"#), "version 2 is not 1"),
            (text.replacing(#""device":"kitchen""#, with: #""device":"bedroom""#), "written for device \"bedroom\""),
            (text.replacing(#""applied":true"#, with: #""applied":true,"extra":1"#), "held[0].extra: unknown member"),
            (text.replacing("00ff10", with: "xyz0"), "held[0].correlationData: not hexadecimal"),
            (text.replacing(#""code":"expired""#, with: #""code":"gone""#), "answered[1].error.code: not a known code"),
            (text.replacing(#""receivedAt":1795953600123"#, with: #""receivedAt":"now""#), "held[0].receivedAt: expected a number"),
            (text.replacing(#""revision":4"#, with: #""revision":-4"#), "owed[0].result.revision: not a revision"),
            (text.replacing(#""correlationData":"07""#, with: #""correlationData":7"#), "owed[0].correlationData: expected a string"),
            (text.replacing(#""owed":["#, with: #""owed":[1,"#), "owed[0]: expected an object"),
            ("[]", "the journal: expected an object"),
        ]
        for (bad, reason) in cases {
            do {
                _ = try CommandJournal.decode(Array(bad.utf8), deviceID: "kitchen")
                Issue.record("accepted: \(bad)")
            } catch {
                #expect(error.reason.contains(reason), "\(error.reason) (wanted \(reason))")
            }
        }
    }
}
