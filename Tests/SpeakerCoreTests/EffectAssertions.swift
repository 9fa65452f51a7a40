// SPDX-License-Identifier: Apache-2.0
@testable import SpeakerCore
import SpeakerProtocol
import Testing

/// Exhaustive (TCA-style) assertions on one `reduce`: the WHOLE effect list
/// it returns, in order, every field of every effect, and the whole visible
/// state, described as the change from the state before.
///
/// Effects are compared as one line each (``EffectLine``): the line holds
/// every field of the effect (topic, QoS, retain, correlation data and the
/// whole payload of a publication; the full request of an audio or amp
/// effect; the full persisted state), so two effects with the same line are
/// equal, and a failure prints the actual list ready to paste.
enum EffectLine {
    /// The line of `effect`. Topics of this speaker are shortened to `~/suffix`.
    static func of(_ effect: SpeakerEffect, root: String = "ambient-speaker/kitchen") -> String {
        switch effect {
        case .audio(let request): return "audio \(request)"
        case .amp(let pulse): return "amp \(pulse)"
        case .statusLed(let pattern): return "led \(pattern)"
        case .reserveRevisions(let through): return "reserveRevisions \(through)"
        case .saveState(let state): return "saveState \(state)"
        case .saveMixes(let mixes): return "saveMixes \(mixes)"
        case .saveJournal(let journal):
            return "saveJournal held \(journal.held.map { "\($0.id)\($0.applied ? "" : " (not applied)")" }) owed \(journal.owed.map(\.id)) "
                + "answered \(journal.answered.count)"
        case let .log(level, text): return "log \(level) \(text)"
        case .publish(let p):
            let topic = p.topic.hasPrefix(root + "/") ? "~" + p.topic.dropFirst(root.count) : p.topic
            let body = Array(p.text.utf8) == p.payload ? p.text : "bytes \(p.payload)"
            let correlation = p.correlationData.map { " correlation \($0)" } ?? ""
            return "publish \(topic) qos\(p.qos)\(p.retain ? " retained" : "")\(correlation) \(body)"
        }
    }
}

/// The core's state after an action, compared whole: every field of every
/// child (`SpeakerState`), named briefly. Left out, because the effect lines
/// already assert them to the byte: the input decoders' internals (their
/// events are the `event` publications and button actions), the revision
/// counter (each result and `session` names its revision; reservations are
/// `reserveRevisions` lines), the save schedule (`saveState` lines), and the
/// copies of the last `device`/`session`/`catalog` (the publish lines).
struct VisibleState: Equatable {
    var selected: String
    var session: SessionState
    var audio: AudioStatus
    var underruns: Int
    /// Engine tickets not yet reported → the command id that asked (nil: a button or the core).
    var outstanding: [UInt64: String?]
    var nextTicket: UInt64
    var volume: VolumeState
    /// Mixer writes not yet confirmed → the level asked for.
    var pendingLevels: [UInt64: Double]
    var lastMixerReading: Double??
    /// Ids of accepted commands whose results wait for the next publication.
    var awaitingPublish: [String]
    var sessionWithheld: String?
    var reservationRetryAt: MonotonicInstant?
    var reservationFailures: Int
    var retainedCommandsIgnored: Int
    var mqttConnected: Bool
    var homeAssistantResendAt: MonotonicInstant?
    var brokerProblem: ConnectionProblem?
    var takeoverSuspected: Bool
    var actedOnDown: Set<TransportButton>
    var resumeAtStart: Bool

    init(_ s: SpeakerState) {
        selected = s.transport.selectedSound.id
        session = s.transport.session
        audio = s.transport.audio
        underruns = s.transport.underruns
        outstanding = s.transport.outstanding.mapValues { $0?.id }
        nextTicket = s.tickets.next
        volume = s.volume.level
        pendingLevels = s.volume.pendingLevels.mapValues(\.level)
        lastMixerReading = s.volume.lastMixerReading.map(\.db)
        awaitingPublish = s.publishing.resultsAwaitingPublish.map(\.origin.id)
        sessionWithheld = s.publishing.sessionWithheld
        reservationRetryAt = s.publishing.reservationRetryAt
        reservationFailures = s.publishing.reservationFailures
        retainedCommandsIgnored = s.commands.retainedCommandsIgnored
        mqttConnected = s.link.mqttConnected
        homeAssistantResendAt = s.link.homeAssistantResendAt
        brokerProblem = s.link.broker.problem
        takeoverSuspected = s.link.broker.takeoverSuspected
        actedOnDown = s.input.actedOnDown
        resumeAtStart = s.persistence.resumeAtStart
    }

    /// The fields that differ, as `name: actual (expected …)`, for a failure message.
    func differences(from expected: VisibleState) -> String {
        zip(Mirror(reflecting: self).children, Mirror(reflecting: expected).children)
            .filter { String(describing: $0.0.value) != String(describing: $0.1.value) }
            .map { "\($0.0.label ?? "?"): \($0.0.value) (expected \($0.1.value))" }
            .joined(separator: "; ")
    }
}

extension Harness {
    /// Presses `line` for 100 ms (effects not asserted) and moves the clock
    /// 100 ms past the release, where a `.tick` decodes the press.
    mutating func pressAndRelease(_ line: InputLine) {
        edge(line, true)
        edge(line, false, afterMs: 100)
        now = now.advanced(byMilliseconds: 100)
    }

    /// Sends the first three quadrature edges of one detent, 5 ms apart
    /// (clockwise: A leads B), and answers the fourth, which completes it,
    /// 5 ms later (effects of the first three not asserted).
    mutating func startDetent(clockwise: Bool) -> LineEdge {
        let (lead, follow) = clockwise ? (InputLine.encoderA, InputLine.encoderB) : (.encoderB, .encoderA)
        for (line, active) in [(lead, true), (follow, true), (lead, false)] { edge(line, active, afterMs: 5) }
        now = now.advanced(byMilliseconds: 5)
        return LineEdge(line: follow, isActive: false, at: now)
    }

    /// Reduces `action` once (no automatic answers: a `reserveRevisions` or a
    /// `setMixerLevel` is answered by the next asserted action) and expects
    /// exactly `expected` effects, in order, and the visible state before
    /// changed by `change` and nothing else.
    mutating func assertEffects(of action: SpeakerAction, equal expected: [String],
                                state change: (inout VisibleState) -> Void = { _ in },
                                sourceLocation: SourceLocation = #_sourceLocation) {
        var expectedState = VisibleState(state)
        change(&expectedState)
        let effects = speaker.reduce(action)
        let lines = effects.map { EffectLine.of($0) }
        #expect(lines == expected, """
            effects of \(action) differ; actual:
            @@actual line \(sourceLocation.line)@@
            \(lines.map { "    #\"\($0)\"#," }.joined(separator: "\n"))
            @@end@@
            """, sourceLocation: sourceLocation)
        let actualState = VisibleState(state)
        #expect(actualState == expectedState, "state differs: \(actualState.differences(from: expectedState))",
                sourceLocation: sourceLocation)
    }

    /// ``assertEffects(of:equal:state:sourceLocation:)`` for a command payload at the current instant.
    mutating func assertCommand(_ json: String, responseTopic: String? = nil, correlation: [UInt8]? = nil,
                                retained: Bool = false, equal expected: [String],
                                state change: (inout VisibleState) -> Void = { _ in },
                                sourceLocation: SourceLocation = #_sourceLocation) {
        let incoming = IncomingCommand(payload: Array(json.utf8), responseTopic: responseTopic,
                                       correlationData: correlation, retained: retained)
        assertEffects(of: .command(incoming, at: now), equal: expected, state: change, sourceLocation: sourceLocation)
        // The broker acknowledges the result at once (the next command's journal owes only its own).
        let owed = speaker.journalSnapshot.owed.map(\.id)
        if !owed.isEmpty { _ = speaker.reduce(.resultsDelivered(owed, at: now)) }
    }
}
