import SpeakerCore
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
        case .reserveRevisions(let through): return "reserveRevisions \(through)"
        case .saveState(let state): return "saveState \(state)"
        case let .log(level, text): return "log \(level) \(text)"
        case .publish(let p):
            let topic = p.topic.hasPrefix(root + "/") ? "~" + p.topic.dropFirst(root.count) : p.topic
            let body = Array(p.text.utf8) == p.payload ? p.text : "bytes \(p.payload)"
            let correlation = p.correlationData.map { " correlation \($0)" } ?? ""
            return "publish \(topic) qos\(p.qos)\(p.retain ? " retained" : "")\(correlation) \(body)"
        }
    }
}

/// The state a user or a client can observe, compared whole after each action.
struct VisibleState: Equatable, CustomStringConvertible {
    var selected: String
    var session: SessionState
    var volume: VolumeState
    var audio: AudioStatus
    var underruns: Int
    var mqttConnected: Bool
    var retainedCommandsIgnored: Int
    var sessionWithheld: String?

    init(_ s: SpeakerState) {
        selected = s.transport.selectedSound.id
        session = s.transport.session
        volume = s.volume.level
        audio = s.transport.audio
        underruns = s.transport.underruns
        mqttConnected = s.link.mqttConnected
        retainedCommandsIgnored = s.commands.retainedCommandsIgnored
        sessionWithheld = s.publishing.sessionWithheld
    }

    var description: String {
        "selected \(selected), \(session), \(volume), audio \(audio), underruns \(underruns), mqtt \(mqttConnected), "
            + "retained ignored \(retainedCommandsIgnored), withheld \(sessionWithheld ?? "-")"
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
        #expect(VisibleState(state) == expectedState, sourceLocation: sourceLocation)
    }

    /// ``assertEffects(of:equal:state:sourceLocation:)`` for a command payload at the current instant.
    mutating func assertCommand(_ json: String, responseTopic: String? = nil, correlation: [UInt8]? = nil,
                                retained: Bool = false, equal expected: [String],
                                state change: (inout VisibleState) -> Void = { _ in },
                                sourceLocation: SourceLocation = #_sourceLocation) {
        let incoming = IncomingCommand(payload: Array(json.utf8), responseTopic: responseTopic,
                                       correlationData: correlation, retained: retained)
        assertEffects(of: .command(incoming, at: now), equal: expected, state: change, sourceLocation: sourceLocation)
    }
}
