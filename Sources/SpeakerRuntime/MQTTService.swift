// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerProtocol
import SpeakerLoop
import SpeakerPorts

/// The MQTT seam: link events become actions (`command`, the retained
/// `session`, Home Assistant's status, connection changes), `.publish`
/// effects become publications. Stops by publishing `offline` (acknowledged)
/// before a clean disconnect. Loop thread only.
public final class MQTTService: SpeakerService {
    public let name = "mqtt"
    private let client: any MQTTClient
    private let loop: any EventLoopProtocol
    private let logger: Logger
    /// This speaker's topics (matched against every message).
    private let topics: SpeakerTopics
    private let broker: String
    private let homeAssistantStatusTopic: String
    /// True while `events()` holds the link's writes.
    private var holding = false
    /// Results queued and not yet acknowledged by the broker, oldest first:
    /// the command's id and the publication's message id. When the PUBACK
    /// has come the core hears `.resultsDelivered`, and stops owing them.
    private var resultsInFlight: [(id: String, messageID: Int32)] = []
    /// Results waiting for room among ``resultWindow`` in flight, oldest
    /// first. Kept here rather than in libmosquitto's queue so that a stop
    /// that runs out of time has sent none of them: they stay owed in the
    /// journal and the next process sends each once, where a result already
    /// written to the broker but not yet acknowledged would be sent twice.
    private var resultsWaiting: [Publication] = []
    /// False once the closing handshake stops handing results to the link.
    private var releasingResults = true
    /// The most results handed to the link and not yet acknowledged: a few
    /// round trips' worth (the broker acknowledges each at once), far more
    /// than a speaker answers per round trip in normal use.
    static let resultWindow = 8
    /// The link's event fd on the loop while running.
    private var phase: ServicePhase<LoopRegistration> = .idle
    private weak var context: ServiceContext?

    public init(client: any MQTTClient, config: SpeakerConfig, loop: any EventLoopProtocol, logger: Logger) {
        self.client = client
        self.loop = loop
        self.logger = logger
        topics = SpeakerTopics(root: config.topicRoot)
        broker = "\(config.mqtt.host):\(config.mqtt.port)"
        homeAssistantStatusTopic = HomeAssistantDiscovery.statusTopic(config)
    }

    public func start(_ context: ServiceContext) throws(StartupError) {
        self.context = context
        let registration = loop.addReader(fd: client.eventFD) { [unowned self] in self.events() }
        do { try client.start() } catch {
            loop.remove(registration)
            throw StartupError(exitCode: 2, message: "mqtt: \(error)")
        }
        phase = .running(registration)
    }

    /// `.publish`: hands the publication to the client (a QoS 1 result
    /// waits its turn when ``resultWindow`` results are in flight).
    func publish(_ p: Publication) {
        if p.resultID != nil && p.qos > 0 && (!resultsWaiting.isEmpty || resultsInFlight.count >= Self.resultWindow) {
            if resultsWaiting.count >= CommandJournal.maxHeld { resultsWaiting.removeFirst() }  // still owed in the core
            resultsWaiting.append(p)
            client.wakeOnAcknowledgements(true)
        } else {
            send(p)
        }
        if holding && p.deliverNow {
            // The core's write policy: what is queued so far (the command's
            // PUBACK and its answer) leaves now in a segment of its own; the
            // rest of the dispatch follows at the end of the drain.
            client.flush()
            client.holdWrites()
        }
    }

    private func send(_ p: Publication) {
        let outcome = client.publish(topic: p.topic, payload: p.payload, qos: p.qos, retain: p.retain,
                                     correlationData: p.correlationData)
        switch outcome {
        case .rejected(let error):
            logger.warning("publish to \(p.topic) failed: \(error)")
        case .queued(let messageID):
            if let id = p.resultID, p.qos > 0 { resultsInFlight.append((id, messageID)) }  // at most resultWindow
        case .notConnected:
            break  // a result stays owed (journaled) and goes out again with the next start
        }
    }

    public func observe(_ state: SpeakerState) {
        // The core's verdict on a session takeover slows the link's reconnects.
        client.setPatientReconnects(state.link.broker.takeoverSuspected)
    }

    /// How long the closing handshake waits for the next of the broker's
    /// PUBACKs: a broker that has gone quiet ends it this soon.
    public static let closingQuietMs = 1000
    /// The most the closing handshake takes while acknowledgements keep
    /// coming (a slow board draining a burst), well inside the unit's
    /// `TimeoutStopSec` (10 s) with the fade and the last save after it.
    public static let closingLimitMs = 6000
    /// How long a disconnect without the closing handshake waits for `offline`'s PUBACK.
    static let closingTimeoutMs = 1500
    /// Whether the closing handshake published `offline` (stop then only disconnects).
    private var offlineSent = false

    /// The closing handshake, while every other service still runs and before
    /// the core saves for the last time (the core is `.stopping`: a command
    /// read from here is held in the command journal for the next process,
    /// its acknowledgement leaving after the journal write): reads what has
    /// arrived, publishes `offline`, and goes on reading until the broker has
    /// acknowledged it and every result. It gives up when the broker
    /// acknowledges nothing for ``closingQuietMs``, or after
    /// ``closingLimitMs`` in all: a slow board still draining a burst of
    /// commands is given the time while it makes progress, a dead broker is
    /// not. Results still waiting for room in flight when one quiet interval
    /// of the limit is left are not sent: the journal owes them, and the
    /// next process sends each once. A command that arrives after that is
    /// never read (``stop()``), so the broker delivers it again to the next
    /// process: none is acknowledged and left unanswered.
    public func shutdownBegan() {
        guard case .running = phase, let context else { return }
        events()
        let offline = client.publish(topic: topics.availability, payload: SpeakerTopics.offline, qos: 1, retain: true,
                                     correlationData: nil)
        guard case .queued = offline else { return }  // not connected: the will says offline
        offlineSent = true
        // Every exit reports what the broker acknowledged since the last
        // drain: PUBACKs read by the link's thread with no event left to
        // drain would otherwise stay owed in the stop's last journal write,
        // and the next process would send those results a second time.
        defer {
            releasingResults = false  // what still waits stays owed (journaled), never half-sent
            reportDeliveredResults(context)
        }
        let start = context.now().nanoseconds
        let limit = start + UInt64(Self.closingLimitMs) * 1_000_000
        // The last quiet interval of the limit is for the results already
        // in flight: none is handed to the link after this.
        let lastRelease = limit - UInt64(Self.closingQuietMs) * 1_000_000
        var quietUntil = start + UInt64(Self.closingQuietMs) * 1_000_000
        var outstanding = client.unacknowledgedCount
        var acknowledged = client.acknowledgedCount
        while outstanding > 0 || (releasingResults && !resultsWaiting.isEmpty) {
            let now = context.now().nanoseconds
            if releasingResults && now >= lastRelease {
                releasingResults = false
                if !resultsWaiting.isEmpty {
                    logger.warning("\(resultsWaiting.count) result(s) not sent before the stop's limit: the journal keeps them for the next start")
                }
                continue
            }
            let deadline = min(releasingResults ? lastRelease : limit, quietUntil)
            if now >= deadline {
                let waited = (now - start) / 1_000_000
                let why = now >= limit ? "the closing handshake's \(Self.closingLimitMs) ms limit"
                    : "no acknowledgement for \(Self.closingQuietMs) ms"
                logger.warning("\(outstanding) publication(s) unacknowledged after \(waited) ms (\(why))")
                return
            }
            if client.waitForEvents(timeoutMs: Int((deadline - now) / 1_000_000)) { events() }
            let nowAcknowledged = client.acknowledgedCount
            if nowAcknowledged != acknowledged {
                quietUntil = context.now().nanoseconds + UInt64(Self.closingQuietMs) * 1_000_000
                acknowledged = nowAcknowledged
            }
            outstanding = client.unacknowledgedCount
        }
        logger.info("offline acknowledged; every command received was answered or journaled")
    }

    /// A clean disconnect, reading nothing more; `offline` (acknowledged)
    /// first if the closing handshake could not send it.
    public func stop() {
        guard case .running(let registration) = phase else { return }
        phase = .stopped
        loop.remove(registration)
        client.shutdown(finalPublish: offlineSent ? nil : (topic: topics.availability, payload: SpeakerTopics.offline, retain: true),
                        timeoutMs: offlineSent ? 200 : Self.closingTimeoutMs)
        context = nil
    }

    /// Drains the link's events into the core. What they make the core
    /// publish leaves in one write once all of them are reduced, except a
    /// command's result, which leaves as soon as it is published (`perform`).
    private func events() {
        guard let context else { return }
        client.holdWrites()
        holding = true
        defer {
            holding = false
            client.flush()
        }
        let events = client.drainEvents()
        defer { reportDeliveredResults(context) }
        // Every command read in this turn goes to the core in one action,
        // where the first of them is: the journal that holds them is then
        // written once, before any of their acknowledgements leaves (the
        // first result's `deliverNow` writes every PUBACK queued so far).
        let commands = events.compactMap { event -> IncomingCommand? in
            guard case .message(let m) = event, m.topic == topics.command else { return nil }
            return IncomingCommand(payload: m.payload, responseTopic: m.responseTopic, correlationData: m.correlationData,
                                   retained: m.retain)
        }
        var commandsSent = false
        for event in events {
            switch event {
            case .connected:
                logger.info("connected to \(broker)")
                context.send(.mqttConnected(at: context.now()))
            case .disconnected:
                logger.info("disconnected from the broker; reconnecting")  // the core logs why (.problem)
                context.send(.mqttDisconnected(at: context.now()))
            case .problem(let problem):
                context.send(.mqttProblem(problem, at: context.now()))
            case .message(let m) where m.topic == topics.command:
                guard !commandsSent else { continue }
                commandsSent = true
                context.send(.commands(commands, at: context.now()))
            case .message(let m) where m.topic == topics.session:
                if m.retain {
                    let other = m.publisher.map { $0 != client.instanceID } ?? false
                    context.send(.retainedSessionSeen(m.payload, otherPublisher: other, at: context.now()))
                }
            case .message(let m) where m.topic == homeAssistantStatusTopic:
                // Home Assistant (re)started: the core decides whether to announce the device again.
                context.send(.homeAssistantStatus(online: m.payload == SpeakerTopics.online, at: context.now()))
            case .message(let m):
                logger.debug("ignoring a message on \(m.topic)")
            }
        }
    }

    /// Tells the core which owed results the broker has acknowledged since
    /// the last drain (their PUBACKs were read with this drain's events).
    /// Then hands waiting results to the link as room is made.
    private func reportDeliveredResults(_ context: ServiceContext) {
        var delivered: [String] = []
        resultsInFlight.removeAll { entry in
            guard !client.awaitsAcknowledgement(messageID: entry.messageID) else { return false }
            delivered.append(entry.id)
            return true
        }
        if !delivered.isEmpty { context.send(.resultsDelivered(delivered, at: context.now())) }
        while releasingResults && !resultsWaiting.isEmpty && resultsInFlight.count < Self.resultWindow {
            send(resultsWaiting.removeFirst())
        }
        if resultsWaiting.isEmpty || !releasingResults { client.wakeOnAcknowledgements(false) }
    }
}
