// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import SpeakerProtocol
import Testing
import TestSupport

/// A rule fires once per occurrence on the built binary, whatever the clock
/// does: stepped to just before the rule (the simulated board's `clock`
/// command, the host's clock untouched), killed with -9 right after it
/// fired and started again, stepped back and forward across the same
/// occurrence; the next day's occurrence fires again.
@Suite(.serialized) struct ScheduleClockStepEndToEndTests {
    typealias C = ContractEndToEndTests

    /// The occurrences (Unix seconds) of rule 0 that a speaker log says fired.
    static func fired(_ log: String) -> [String] {
        log.split(separator: "\n").filter { $0.contains("schedule rule 0 (") && $0.hasSuffix(" fires") }.compactMap { line in
            line.range(of: "occurrence ").map { String(line[$0.upperBound...].prefix { $0.isNumber }) }
        }
    }

    @Test func aRuleFiresOnceAcrossAKill9AndStepsBackAndForthAndAgainTheNextDay() throws {
        let broker = try TestBroker()
        let peer = try TestPeer(port: broker.port)
        try peer.connect()
        try peer.subscribe("ambient-speaker/e2e/#")
        let stateDirectory = try TemporaryDirectory(prefix: "speaker-state")
        let state = stateDirectory.path
        defer { withExtendedLifetime(stateDirectory) {} }  // removed only when the test is done
        // The rule's hour is about twelve hours from now, so its last
        // occurrence is never inside the catch-up window (ten minutes) when
        // the speaker starts: only the stepped clock makes it fire.
        let now = Int64(time(nil))
        let hour = (now % 86_400 / 3600 + 12) % 24
        let at = (hour < 10 ? "0" : "") + "\(hour):00"
        let config = #""clock":{"timeZone":"UTC"},"schedules":[{"at":""# + at + #"","action":"play","soundID":"rain","fadeSeconds":0}]"#
        let root = "ambient-speaker/e2e"
        // Three seconds before the rule's next occurrence.
        var rule = now / 86_400 * 86_400 + hour * 3600
        while rule - 3 <= now { rule += 86_400 }
        let offset = rule - 3 - now

        let first = try SpeakerProcess(brokerPort: broker.port, extraConfig: config, stateDirectory: state)
        try #require(peer.waitForMessage(topic: "\(root)/availability", timeout: 60) { $0.payloadString == "online" } != nil, "\(first.log)")
        #expect(try first.control("clock synced on") == "ok")
        #expect(try first.control("clock +\(offset)") == "ok offset=\(offset)")
        let playing = peer.waitForMessage(topic: "\(root)/session", timeout: 20) { C.parse($0)?["isPlaying"] == .bool(true) }
        #expect(C.parse(playing)?["soundID"] == .string("rain"), "\(first.log)")
        first.process.send(SIGKILL)  // at once: the firing tick wrote the state file
        _ = first.process.waitForExit(timeout: 10)
        #expect(Self.fired(first.log) == ["\(rule)"], "\(first.log)")

        let second = try SpeakerProcess(brokerPort: broker.port, extraConfig: config, stateDirectory: state)
        #expect(try second.control("clock synced on") == "ok")
        #expect(try second.control("clock +\(offset)") == "ok offset=\(offset)")
        for step in ["-3600", "+3600", "-600", "+600"] {
            #expect(try second.control("clock \(step)").hasPrefix("ok"))
            _ = peer.waitForMessage(topic: "\(root)/never", timeout: 1)
        }
        #expect(Self.fired(second.log).isEmpty, "the same \(at) fired again:\n\(second.log)")
        // The next day's occurrence, three seconds on.
        #expect(try second.control("clock +86400").hasPrefix("ok"))
        var again: [String] = []
        for _ in 0..<40 where again.isEmpty {
            _ = peer.waitForMessage(topic: "\(root)/never", timeout: 0.5)
            again = Self.fired(second.log)
        }
        #expect(again == ["\(rule + 86_400)"], "\(second.log)")
        print("rule 0 fired for \(Self.fired(first.log) + again) across a kill -9 and 5 clock steps")
    }
}
