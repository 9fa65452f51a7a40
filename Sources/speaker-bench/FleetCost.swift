// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerProtocol
import SpeakerSystem
import TestSupport

/// The fleet section: `speakers` simulated speakers (one libmosquitto
/// publisher playing all of them, with the contract's payloads) on a real
/// mosquitto, followed by one real `ambient-speaker watch`. Each round every
/// speaker starts a session, changes it, repeats that change (a QoS 1
/// redelivery), and ends it; the last round re-flashes a tenth of them (a
/// new epoch, revisions from 1). Rounds are paced by the watcher's output
/// (the next starts when every event of the last is printed), so the broker
/// never queues past its limits. Measures the watcher's CPU time and
/// resident memory per speaker, and checks that every expected event was
/// printed exactly once (a figure, 1 or 0, beside the counts).
struct FleetCost {
    let speakers: Int
    let rounds = 5

    func run(report: BenchReport) throws {
        let broker = try TestBroker(extraConfig: ["max_queued_messages 0", "max_inflight_messages 0"])
        let watcher = try WatcherProcess(brokerPort: broker.port)
        guard watcher.waitForLog(timeout: 20, until: { $0.contains("connected to") }) else {
            throw BenchError("the watcher did not connect: \(watcher.log)")
        }
        let publisher = try TestPeer(port: broker.port)
        try publisher.connect()
        let pid = watcher.process.pid
        let idleRSS = ResidentMemory.kilobytes(pid: pid) ?? 0
        let cpu0 = Self.cpuNanoseconds(pid: pid)
        let wall0 = Monotonic.nanoseconds()
        var expected: [String] = []
        var messages = 0

        func send(_ topic: String, _ payload: String) throws {
            try publisher.publish(topic: "ambient-speaker/\(topic)", string: payload, qos: 1, retain: true)
            messages += 1
        }
        func settle(_ what: String) throws {
            guard publisher.waitForPublishes(timeout: 60),
                  watcher.waitForLines(timeout: 120, until: { $0.count >= expected.count }) else {
                throw BenchError("\(what): \(watcher.lines.count) of \(expected.count) events printed")
            }
        }

        for d in 0..<speakers {
            let id = "fleet-\(d)"
            try send("\(id)/device", Self.device(id, epoch: "e1-\(d)"))
            try send("\(id)/catalog", #"[{"id":"rain","name":"Rain","summary":"","kind":"sound"}]"#)
            try send("\(id)/session", Self.session(id, epoch: "e1-\(d)", session: nil, revision: 1, playing: false, ended: true))
            try send("\(id)/availability", "online")
        }
        try settle("announce")
        var revision = [UInt64](repeating: 1, count: speakers)
        for round in 0..<rounds {
            for step in 0..<4 {
                for d in 0..<speakers {
                    let id = "fleet-\(d)", sid = "s-\(d)-\(round)"
                    let reflashed = round == rounds - 1 && d % 10 == 0
                    let epoch = reflashed ? "e2-\(d)" : "e1-\(d)"
                    if reflashed && step == 0 { revision[d] = 1 }  // the counter starts over
                    if step != 2 { revision[d] += 1 }  // step 2 repeats step 1's payload
                    let live = step < 3
                    try send("\(id)/session", Self.session(id, epoch: epoch, session: sid, revision: revision[d],
                                                           playing: step == 0, ended: !live))
                    switch step {
                    case 0: expected.append("start \(id) \(sid)")
                    case 1: expected.append("update \(id) \(sid)")
                    case 3: expected.append("end \(id) \(sid)")
                    default: break
                    }
                }
                try settle("round \(round) step \(step)")
            }
        }
        let wall = Double(Monotonic.nanoseconds() - wall0) / 1e9
        let cpu = Double(Self.cpuNanoseconds(pid: pid) - cpu0) / 1e6
        let rss = ResidentMemory.kilobytes(pid: pid) ?? 0
        let seen = watcher.lines.map(Self.summary)
        let exactlyOnce = seen == expected
        if !exactlyOnce {
            let missing = Set(expected).subtracting(seen).sorted().prefix(5)
            report.note("fleet: events differ from the expected ones (\(seen.count) printed, \(expected.count) expected); missing e.g. \(Array(missing))")
        }
        let n = Double(speakers)
        report.metric("fleet_speakers", n, unit: "simulated speakers")
        report.metric("fleet_messages", Double(messages), unit: "messages published")
        report.metric("fleet_events", Double(seen.count), unit: "lifecycle events printed")
        report.metric("fleet_events_exactly_once", exactlyOnce ? 1 : 0, unit: "1 when every expected event was printed once, in order per speaker")
        report.metric("fleet_watcher_cpu_per_speaker", cpu / n, unit: "ms CPU of the watcher per speaker over \(rounds) rounds")
        report.metric("fleet_watcher_cpu_per_message", cpu * 1000 / Double(messages), unit: "µs CPU per message received")
        report.metric("fleet_watcher_rss_per_speaker", Double(rss - idleRSS) / n, unit: "kB resident growth per speaker followed")
        report.metric("fleet_watcher_rss", Double(rss), unit: "kB resident, \(speakers) speakers followed")
        report.metric("fleet_wall", wall, unit: "s")
        // A cost measured while events are lost or doubled is no figure: the section fails.
        if !exactlyOnce { throw BenchError("the watcher's events were not each printed exactly once") }
    }

    /// `kind device session-id` of a JSON line (the same words as `expected`).
    static func summary(_ line: String) -> String {
        guard let json = try? JSONParser().parse(line) else { return "unparsed \(line)" }
        return "\(json["event"]?.stringValue ?? "?") \(json["device"]?.stringValue ?? "?") \(json["session"]?["id"]?.stringValue ?? "-")"
    }

    static func device(_ id: String, epoch: String) -> String {
        #"{"id":"\#(id)","name":"\#(id)","type":"speaker","volume":{"control":"absolute","level":0.4,"step":0.05,"maxLevel":1,"capSource":"config"},"#
            + #""muted":false,"audio":"ok","underruns":0,"software":"fleet","epoch":"\#(epoch)","nightCap":null}"#
    }

    static func session(_ id: String, epoch: String, session: String?, revision: UInt64, playing: Bool, ended: Bool) -> String {
        let sid = session.map { "\"\($0)\"" } ?? "null"
        return #"{"id":\#(sid),"soundID":"rain","soundName":"Rain","layers":null,"isPlaying":\#(playing),"#
            + #""intendsPlayback":\#(playing),"updatedAt":"2026-12-02T03:00:00.000Z","clockSynced":true,"revision":\#(revision),"#
            + #""ended":\#(ended),"commands":["play"],"devices":[\#(device(id, epoch: epoch))],"sleepTimer":null}"#
    }

    /// utime + stime of `pid` from /proc/PID/stat, in nanoseconds.
    static func cpuNanoseconds(pid: Int32) -> UInt64 {
        guard let text = try? FileIO.readText(path: "/proc/\(pid)/stat", maxBytes: 4096),
              let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state is field 3, utime 14, stime 15 (1-based in proc(5)).
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return 0 }
        let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) * 1_000_000_000 / max(ticks, 1)
    }
}
