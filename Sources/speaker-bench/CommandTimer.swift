// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem
import TestSupport

/// Times MQTT round trips through a `TestPeer`: from just before the publish
/// call to the peer's receive callback for the awaited message (both on
/// CLOCK_MONOTONIC). Commands go to `<root>/command` with QoS 1; each is
/// timed twice, to the `session` that shows its change and to its
/// `command/result` (matched by id), and the next command is sent only after
/// both, so commands never queue up behind each other. A wait that times
/// out is counted, not sampled. Owning thread only.
final class CommandTimer {
    private let peer: TestPeer
    private let root: String
    private let report: BenchReport
    private let timeout: Double
    /// Results received with `ok` other than `true`.
    private(set) var rejected = 0

    /// A timer for the speaker under `root` (`ambient-speaker/<id>`).
    init(peer: TestPeer, root: String, report: BenchReport, timeout: Double = 5) {
        self.peer = peer
        self.root = root
        self.report = report
        self.timeout = timeout
    }

    private var echoTopic: String { "\(root)/bench-echo" }

    /// Subscribes to `session`, `command/result`, `availability` and the echo topic.
    func subscribe() throws {
        for topic in ["\(root)/session", "\(root)/command/result", "\(root)/availability", echoTopic] {
            try peer.subscribe(topic)
        }
    }

    /// The broker floor: `count` QoS 1 publishes to a topic the peer itself subscribes to.
    func brokerRoundTrips(_ count: Int) -> LatencySamples {
        var samples = LatencySamples()
        for i in 0..<count {
            peer.clear()
            let payload = "e\(i)"
            let sent = MonotonicClock.now()
            guard (try? peer.publish(topic: echoTopic, string: payload, qos: 1)) != nil,
                  let echo = peer.waitForMessage(topic: echoTopic, timeout: timeout, where: { $0.payloadString == payload })
            else {
                samples.timeouts += 1
                continue
            }
            samples.add(echo.receivedAtNanoseconds &- sent)
        }
        return samples
    }

    /// Samples of one kind of command: publish → matching `session`, and
    /// publish → its `command/result`.
    struct CommandSamples {
        /// Publish to the `session` that shows the change.
        var session = LatencySamples()
        /// Publish to the `command/result` with the command's id.
        var result = LatencySamples()

        /// Adds one command's two timings (a nil one counts as a timeout).
        mutating func add(_ timing: CommandTiming) {
            if let ns = timing.session { session.add(ns) } else { session.timeouts += 1 }
            if let ns = timing.result { result.add(ns) } else { result.timeouts += 1 }
        }

        /// Adds every sample and timeout of `other`.
        mutating func merge(_ other: CommandSamples) {
            session.merge(other.session)
            result.merge(other.result)
        }
    }

    /// One command's timings in nanoseconds; nil where the wait timed out.
    struct CommandTiming {
        var session: UInt64?
        var result: UInt64?
    }

    /// `count` `setVolume` commands alternating 0.3 / 0.6, each timed to the
    /// session whose device level matches and to its result.
    /// Ids are `b<firstID>`, `b<firstID + 1>`, … (never repeated within a run:
    /// the speaker would re-send a known id's result without applying it).
    func volumeCommands(_ count: Int, firstID: Int = 0) -> CommandSamples {
        var samples = CommandSamples()
        for i in firstID..<(firstID + count) {
            let level = i % 2 == 0 ? 0.3 : 0.6
            samples.add(time(action: "setVolume", id: "b\(i)", extra: ",\"level\":\(level)") { session in
                session.volumeLevel.map { abs($0 - level) < 1e-6 } ?? false
            })
        }
        return samples
    }

    /// `count` commands alternating `pause` / `play`, each timed to the
    /// session whose `isPlaying` matches and to its result; the two kinds are
    /// sampled apart.
    func transportCommands(_ count: Int) -> (play: CommandSamples, pause: CommandSamples) {
        var play = CommandSamples()
        var pause = CommandSamples()
        for i in 0..<count {
            let playing = i % 2 == 1
            let timing = time(action: playing ? "play" : "pause", id: "p\(i)") { $0.isPlaying == playing }
            if playing { play.add(timing) } else { pause.add(timing) }
        }
        return (play, pause)
    }

    /// Publishes `{"id":id,"action":action<extra>}` and returns the
    /// nanoseconds until a `session` satisfying `expected` arrived and until
    /// the `command/result` with this id arrived (nil where a wait timed out).
    func time(action: String, id: String, extra: String = "", expecting expected: (SessionFields) -> Bool) -> CommandTiming {
        peer.clear()
        let payload = "{\"id\":\"\(id)\",\"action\":\"\(action)\"\(extra)}"
        let sent = MonotonicClock.now()
        do {
            try peer.publish(topic: "\(root)/command", string: payload, qos: 1)
        } catch {
            report.note("publish \(payload): \(error)")
            return CommandTiming()
        }
        let session = peer.waitForMessage(topic: "\(root)/session", timeout: timeout) { expected(SessionFields($0.payload)) }
        let quotedID = "\"\(id)\""
        let result = peer.waitForMessage(topic: "\(root)/command/result", timeout: timeout) {
            SessionFields($0.payload).token(for: "id", after: nil) == quotedID
        }
        if let result, SessionFields(result.payload).token(for: "ok", after: nil) != "true" {
            rejected += 1
            report.note("command \(payload) → \(result.payloadString)")
        }
        if session == nil { report.note("command \(payload): no matching session within \(timeout) s") }
        if result == nil { report.note("command \(payload): no result within \(timeout) s") }
        return CommandTiming(session: session.map { $0.receivedAtNanoseconds &- sent },
                             result: result.map { $0.receivedAtNanoseconds &- sent })
    }
}
