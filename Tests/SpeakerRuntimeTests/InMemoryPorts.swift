// SPDX-License-Identifier: Apache-2.0
import SpeakerCore
import SpeakerLoop
import SpeakerPorts
import SpeakerRuntime
import Ambience

/// What the in-memory ports saw, in order, across seams (start-up and
/// shutdown order are read from it).
final class Trace {
    var lines: [String] = []
    func add(_ line: String) { lines.append(line) }
}

/// The audio engine behind its port: records requests; a test queues
/// reports and makes the report descriptor readable on the manual loop.
final class InMemoryAudio: AudioOutput {
    let reportFD: Int32 = 9001
    let sampleRate = 48_000
    let trace: Trace
    var requests: [String] = []
    var pendingReports: [AudioEngineReport] = []
    /// The source of the last `play`/`switchTo`.
    var lastSource: SoundSource?

    init(trace: Trace) { self.trace = trace }

    func startOutput() throws(AudioOutputError) { trace.add("audio.start") }

    func send(_ request: AudioEngineRequest) -> Bool {
        switch request {
        case let .play(source, fadeMs, ticket):
            if let source { lastSource = source }
            requests.append("play \(source == nil ? "nil" : "source") fade \(fadeMs) ticket \(ticket)")
        case let .pause(fadeMs, ticket): requests.append("pause fade \(fadeMs) ticket \(ticket)")
        case let .switchTo(source, crossfadeMs, ticket):
            lastSource = source
            requests.append("switch crossfade \(crossfadeMs) ticket \(ticket)")
        case let .setGain(gain, rampMs): requests.append("gain \(gain) ramp \(rampMs)")
        case let .longFade(multiplier, overMs, ticket): requests.append("long fade \(multiplier) over \(overMs) ticket \(ticket)")
        case let .setMuted(muted, rampMs): requests.append("muted \(muted) ramp \(rampMs)")
        }
        return true
    }

    func drainReports() -> [AudioEngineReport] {
        defer { pendingReports = [] }
        return pendingReports
    }

    func shutdown(fadeMs: Int) { trace.add("audio.shutdown fade \(fadeMs)") }
}

/// The MQTT link behind its port: records publications; a test queues events
/// and makes the event descriptor readable on the manual loop.
final class InMemoryMQTT: MQTTClient {
    let eventFD: Int32 = 9002
    let instanceID = "test-instance"
    let trace: Trace
    var failStart = false
    var connected = false
    var publications: [(topic: String, text: String, retain: Bool)] = []
    var pendingEvents: [MQTTEvent] = []
    var patient = false

    init(trace: Trace) { self.trace = trace }

    func start() throws(MQTTError) {
        trace.add("mqtt.start")
        if failStart { throw MQTTError(function: "mosquitto_connect_async", code: 14, message: "refused (test)") }
    }

    func drainEvents() -> [MQTTEvent] {
        defer { pendingEvents = [] }
        for event in pendingEvents {
            if case .connected = event { connected = true }
            if case .disconnected = event { connected = false }
        }
        return pendingEvents
    }

    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool, correlationData: [UInt8]?) -> PublishOutcome {
        guard connected else { return .notConnected }
        publications.append((topic, String(decoding: payload, as: UTF8.self), retain))
        return .queued(messageID: Int32(publications.count))
    }

    func setPatientReconnects(_ patient: Bool) { self.patient = patient }

    /// Publications still waiting for the broker (0: each is acknowledged at
    /// once, unless a test plays a slow broker).
    var unacknowledged = 0
    /// Acknowledgements so far.
    var acknowledged = 0
    /// A test's broker during the closing handshake: called with each wait's
    /// timeout, it moves the clock and the counts; whether events arrived.
    var onWait: ((Int) -> Bool)?
    var unacknowledgedCount: Int { unacknowledged }
    var acknowledgedCount: Int { acknowledged }
    /// Message ids a test's slow broker has not acknowledged (none: each is at once).
    var awaitingAcknowledgement: Set<Int32> = []
    func awaitsAcknowledgement(messageID: Int32) -> Bool { awaitingAcknowledgement.contains(messageID) }

    func waitForEvents(timeoutMs: Int) -> Bool { onWait?(timeoutMs) ?? !pendingEvents.isEmpty }

    func shutdown(finalPublish: (topic: String, payload: [UInt8], retain: Bool)?, timeoutMs: Int) -> MQTTShutdownOutcome {
        trace.add("mqtt.shutdown " + (finalPublish.map { "\($0.topic)=\(String(decoding: $0.payload, as: UTF8.self))" } ?? "-"))
        return .stopped
    }
}
