// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import MQTTLink
import SpeakerCore
import SpeakerLoop
import SpeakerPorts
import SpeakerSystem
import SpeakerWatch

/// `ambient-speaker watch --broker HOST:PORT [--prefix P] [--device ID]…`:
/// follows every speaker under the prefix (or the named ones, subscribed to
/// by name, for brokers that give retained messages only to exact
/// subscriptions) and prints one JSON line per session lifecycle event on
/// stdout, `{"event","device","epoch","session","at"}`, written unbuffered as
/// it happens. Problems with what speakers publish are logged on stderr.
/// With `--post URL` each line is also POSTed to a plain-http endpoint, in
/// order, retried until accepted (`EventPoster`, `PostOutbox`); at SIGTERM
/// it gets 5 s to deliver what waits.
/// Runs until SIGTERM or SIGINT (exit 0); 1 for bad arguments, 2 when the
/// link cannot start.
struct WatchCommand {
    var host: String
    var port: Int
    var prefix: String
    var devices: [String]
    var postURL: String?
    let logger: Logger

    /// Parses the flags (already taken out of the argument list).
    init(broker: String?, prefix: String?, devices: [String], post: String? = nil,
         logger: Logger) throws(CommandLineTool.UsageError) {
        guard let broker else { throw .init(message: "watch: --broker HOST:PORT is required") }
        guard let colon = broker.lastIndex(of: ":"), let port = Int(broker[broker.index(after: colon)...]),
              (1...65_535).contains(port), colon != broker.startIndex else {
            throw .init(message: "--broker: expected HOST:PORT (port 1–65535), got \"\(broker)\"")
        }
        host = String(broker[..<colon])
        self.port = port
        self.prefix = prefix ?? "ambient-speaker"
        guard !self.prefix.isEmpty, !self.prefix.contains(where: { "+#\0".contains($0) }),
              !self.prefix.split(separator: "/", omittingEmptySubsequences: false).contains(where: \.isEmpty) else {
            throw .init(message: "--prefix: expected topic levels without +, # or empty levels, got \"\(self.prefix)\"")
        }
        for id in devices where !FleetTopic.isDeviceID(id) {
            throw .init(message: "--device: expected a device id ([a-z0-9][a-z0-9-]{0,62}), got \"\(id)\"")
        }
        self.devices = devices
        if let post, case .failure(let e) = HTTPPost.parse(post) { throw .init(message: "--post: \(e.reason), got \"\(post)\"") }
        postURL = post
        self.logger = logger
    }

    func run() -> Int32 {
        let settings = MQTTSettings(host: host, port: port, clientID: "ambient-speaker-watch-\(getpid())",
                                    subscriptions: FleetTopic.subscriptions(prefix: prefix, devices: devices),
                                    sessionExpirySeconds: 0)
        do {
            try EventLoop.blockSignals([SIGTERM, SIGINT])
            let loop = try EventLoop()
            let link = try MQTTLink(settings: settings, logger: logger.named("mqtt"), clock: { MonotonicClock.now() })
            let poster = try postURL.map { url throws in try EventPoster(url: url, logger: logger.named("post")) }
            try poster?.start()
            let watcher = FleetWatcher(prefix: prefix, link: link, onEvent: { event in
                let line = Self.line(event)
                Self.print(line)
                poster?.enqueue(line)
            }, onProblem: { logger.warning($0) })
            if let poster { logger.info("posting each event to \(poster.target)") }
            logger.info("watching \(devices.isEmpty ? "\(prefix)/+/…" : devices.map { "\(prefix)/\($0)/…" }.joined(separator: ", "))"
                        + " on \(host):\(port)")
            _ = loop.addReader(fd: link.eventFD) {
                for event in link.drainEvents() {
                    switch event {
                    case .message(let m):
                        watcher.receive(WatchMessage(topic: m.topic, payload: m.payload, retained: m.retain),
                                        now: MonotonicClock.now() / 1_000_000)
                    case .connected:
                        logger.info("connected to \(host):\(port) (MQTT \(link.protocolVersion == 5 ? "v5" : "3.1.1"))")
                    case .disconnected:
                        logger.info("disconnected; reconnecting")
                    case .problem(let problem):
                        logger.warning("not connected: \(problem)")
                    }
                }
            }
            try loop.onSignal([SIGTERM, SIGINT]) { _ in loop.stop() }
            try link.start()
            try loop.run()
            link.shutdown(finalPublish: nil, timeoutMs: 1_000)
            poster?.stop(graceMs: 5_000)
            return 0
        } catch {
            logger.error("watch: \(error)")
            return 2
        }
    }

    /// One event as its JSON line, stamped with the wall clock.
    static func line(_ event: LifecycleEvent) -> [UInt8] {
        let now = WallClock.now()
        let at = WallClockReading(seconds: now.seconds, milliseconds: Int(now.nanoseconds / 1_000_000)).iso8601
        return event.jsonLine(at: at)
    }

    /// Writes one JSON line on stdout.
    static func print(_ line: [UInt8]) {
        do {
            try FileIO.writeAll(fd: 1, bytes: line + [UInt8(ascii: "\n")])
        } catch {
            StandardError.write("ambient-speaker watch: stdout: \(error)\n")
        }
    }
}
