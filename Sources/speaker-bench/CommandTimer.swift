import SpeakerSystem
import TestSupport

/// Times MQTT round trips through a `TestPeer`: from just before the publish
/// call to the peer's receive callback for the awaited message (both on
/// CLOCK_MONOTONIC). Commands go to `<root>/command` with QoS 1; after the
/// awaited `session` the timer also waits for the command's `command/result`
/// before the next command, so commands never queue up behind each other.
/// A wait that times out is counted, not sampled. Owning thread only.
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

    /// `count` `setVolume` commands alternating 0.3 / 0.6, each timed to the
    /// session whose device level matches.
    func volumeCommands(_ count: Int) -> LatencySamples {
        var samples = LatencySamples()
        for i in 0..<count {
            let level = i % 2 == 0 ? 0.3 : 0.6
            let latency = time(action: "setVolume", id: "b\(i)", extra: ",\"level\":\(level)") { session in
                session.volumeLevel.map { abs($0 - level) < 1e-6 } ?? false
            }
            if let latency { samples.add(latency) } else { samples.timeouts += 1 }
        }
        return samples
    }

    /// `count` commands alternating `pause` / `play`, each timed to the
    /// session whose `isPlaying` matches; the two kinds are sampled apart.
    func transportCommands(_ count: Int) -> (play: LatencySamples, pause: LatencySamples) {
        var play = LatencySamples()
        var pause = LatencySamples()
        for i in 0..<count {
            let playing = i % 2 == 1
            let latency = time(action: playing ? "play" : "pause", id: "p\(i)") { $0.isPlaying == playing }
            switch (latency, playing) {
            case (let ns?, true): play.add(ns)
            case (let ns?, false): pause.add(ns)
            case (nil, true): play.timeouts += 1
            case (nil, false): pause.timeouts += 1
            }
        }
        return (play, pause)
    }

    /// Publishes `{"id":id,"action":action<extra>}` and returns the
    /// nanoseconds until a `session` satisfying `expected` arrived, or nil on
    /// timeout. Then waits (untimed) for the command's result.
    func time(action: String, id: String, extra: String = "", expecting expected: (SessionFields) -> Bool) -> UInt64? {
        peer.clear()
        let payload = "{\"id\":\"\(id)\",\"action\":\"\(action)\"\(extra)}"
        let sent = MonotonicClock.now()
        do {
            try peer.publish(topic: "\(root)/command", string: payload, qos: 1)
        } catch {
            report.note("publish \(payload): \(error)")
            return nil
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
        return session.map { $0.receivedAtNanoseconds &- sent }
    }
}
