import Testing
import SpeakerCore
import SpeakerProtocol

@Suite struct ButtonDecoderTests {
    let timing = ButtonDecoder.Timing(debounceMs: 30, longPressMs: 800, doublePressMs: 0)

    /// Feeds (ms, level) edges then advances to `untilMs`; returns gestures with the time they came out.
    func run(_ d: inout ButtonDecoder, _ edges: [(Int, Bool)], untilMs: Int) -> [ButtonGesture] {
        var out: [ButtonGesture] = []
        for (ms, level) in edges { out += d.edge(isActive: level, at: .milliseconds(UInt64(ms))) }
        out += d.advance(to: .milliseconds(UInt64(untilMs)))
        return out
    }

    @Test func aCleanPressIsOnePress() {
        var d = ButtonDecoder(timing: timing)
        #expect(run(&d, [(100, true), (150, false)], untilMs: 300) == [.press])
    }

    @Test func bounceOnBothEdgesIsStillOnePress() {
        var d = ButtonDecoder(timing: timing)
        let bouncy: [(Int, Bool)] = [(100, true), (101, false), (101, true), (102, false), (103, true),
                                     (200, false), (201, true), (202, false), (203, true), (204, false)]
        #expect(run(&d, bouncy, untilMs: 400) == [.press])
    }

    @Test func aSpikeShorterThanTheDebounceIsIgnored() {
        var d = ButtonDecoder(timing: timing)
        #expect(run(&d, [(100, true), (110, false)], untilMs: 400).isEmpty)
        #expect(d.nextDeadline == nil)
    }

    @Test func longFiresOnceWhileHeldAndTheReleaseAddsNothing() {
        var d = ButtonDecoder(timing: timing)
        #expect(d.edge(isActive: true, at: .milliseconds(100)).isEmpty)
        #expect(d.advance(to: .milliseconds(899)).isEmpty)
        #expect(d.nextDeadline == .milliseconds(900))
        #expect(d.advance(to: .milliseconds(900)) == [.long])
        #expect(d.advance(to: .milliseconds(5000)).isEmpty)
        #expect(run(&d, [(5000, false)], untilMs: 6000).isEmpty)
    }

    @Test func doublePressWhenEnabledAndASingleWaitsForTheWindow() {
        var d = ButtonDecoder(timing: .init(debounceMs: 30, longPressMs: 800, doublePressMs: 300))
        #expect(run(&d, [(100, true), (150, false), (250, true), (300, false)], untilMs: 1000) == [.double])
        var s = ButtonDecoder(timing: .init(debounceMs: 30, longPressMs: 800, doublePressMs: 300))
        #expect(run(&s, [(100, true), (150, false)], untilMs: 449).isEmpty)
        #expect(s.advance(to: .milliseconds(450)) == [.press])
    }

    @Test func instantsPrintMillisecondsWithPaddedMicroseconds() {
        #expect(MonotonicInstant(nanoseconds: 6_532_006_000).description == "6532.006ms")
        #expect(MonotonicInstant(nanoseconds: 1_000_123_456).description == "1000.123ms")
    }

    @Test func zeroDebounceAcceptsEdgesAtOnce() {
        var d = ButtonDecoder(timing: .init(debounceMs: 0, longPressMs: 800, doublePressMs: 0))
        #expect(d.edge(isActive: true, at: .milliseconds(1)).isEmpty)
        #expect(d.edge(isActive: false, at: .milliseconds(2)) == [.press])
    }
}

@Suite struct QuadratureDecoderTests {
    /// Edges of `detents` full cycles (A leads B clockwise), optionally bouncing each edge.
    static func cycle(clockwise: Bool) -> [(phaseA: Bool, level: Bool)] {
        clockwise ? [(true, true), (false, true), (true, false), (false, false)]
                  : [(false, true), (true, true), (false, false), (true, false)]
    }

    func feed(_ d: inout QuadratureDecoder, _ edges: [(phaseA: Bool, level: Bool)], bounce: Int = 0) -> Int {
        var total = 0
        for e in edges {
            for i in 0..<(bounce * 2) { total += d.edge(phaseA: e.phaseA, isActive: i % 2 == 0 ? e.level : !e.level) }
            total += d.edge(phaseA: e.phaseA, isActive: e.level)
        }
        return total
    }

    @Test func fullCyclesCountOneDetentEachWay() {
        var d = QuadratureDecoder()
        #expect(feed(&d, Array(repeating: Self.cycle(clockwise: true), count: 5).flatMap { $0 }) == 5)
        #expect(feed(&d, Array(repeating: Self.cycle(clockwise: false), count: 3).flatMap { $0 }) == -3)
    }

    @Test func bounceOnEveryEdgeProducesNoGhostOrMissedDetents() {
        var d = QuadratureDecoder()
        #expect(feed(&d, Array(repeating: Self.cycle(clockwise: true), count: 50).flatMap { $0 }, bounce: 3) == 50)
        #expect(feed(&d, Array(repeating: Self.cycle(clockwise: false), count: 20).flatMap { $0 }, bounce: 2) == -20)
    }

    @Test func aHalfTurnThatGoesBackCountsNothing() {
        var d = QuadratureDecoder()
        #expect(feed(&d, [(true, true), (false, true), (false, false), (true, false)]) == 0)
    }

    @Test func invalidTransitionsAreIgnored() {
        var d = QuadratureDecoder()
        // A missed edge makes both phases appear to change at once: no step from it.
        #expect(d.edge(phaseA: true, isActive: true) == 0)
        #expect(d.edge(phaseA: true, isActive: true) == 0, "a repeated level is not a transition")
        #expect(feed(&d, [(false, true), (true, false), (false, false)]) == 1)
    }

    @Test func twoAndOneStepsPerDetent() {
        var two = QuadratureDecoder(stepsPerDetent: 2)
        #expect(feed(&two, Self.cycle(clockwise: true)) == 2)
        var one = QuadratureDecoder(stepsPerDetent: 1)
        #expect(feed(&one, Self.cycle(clockwise: false)) == -4)
    }
}

@Suite struct SpeakerInputTests {
    @Test func aPressOfPlayPauseTogglesAndPublishesTheEvent() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.edge(.playPause, true)
        let up = h.edge(.playPause, false, afterMs: 50)
        #expect(up.published("event").isEmpty, "the release is still inside the debounce time")
        let settled = h.advance(ms: 30)
        #expect(settled.published("event").first?.jsonText == #"{"source":"button","name":"playPause","gesture":"press"}"#)
        #expect(settled.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 1)])
    }

    @Test func holdingPlayPauseStopsTheSession() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.commandDone(#"{"id":"a","action":"play"}"#)
        h.edge(.playPause, true)
        let held = h.advance(ms: 800)
        #expect(held.published("event").first?["gesture"] == .string("long"))
        let done = h.engineDoes(held)
        #expect(done.lastPublished("session")?["ended"] == .bool(true))
    }

    @Test func nextPreviousAndTheEncoderSwitchDoTheirDefaults() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.edge(.next, true); h.edge(.next, false, afterMs: 50)
        #expect(h.advance(ms: 30).audioRequests == [.play(soundID: "pink", fadeMs: 400, ticket: 1)])
        h.send(.engine(.playing(ticket: 1), at: h.now))
        h.edge(.previous, true); h.edge(.previous, false, afterMs: 50)
        #expect(h.advance(ms: 30).audioRequests == [.switchTo(soundID: "white", crossfadeMs: 1500, ticket: 2)])
        h.send(.engine(.playing(ticket: 2), at: h.now))
        h.edge(.encoderSwitch, true); h.edge(.encoderSwitch, false, afterMs: 50)
        #expect(h.advance(ms: 30).audioRequests == [.pause(fadeMs: 400, ticket: 3)])
    }

    @Test func turningTheKnobMovesTheLevelByOneStepPerDetent() {
        var h = Harness()
        h.send(.start(at: h.now))
        var fx: [SpeakerEffect] = []
        for _ in 0..<2 {
            for e in QuadratureDecoderTests.cycle(clockwise: true) {
                fx += h.edge(e.phaseA ? .encoderA : .encoderB, e.level, afterMs: 3)
            }
        }
        #expect(fx.audioRequests == [.setLevel(0.45), .setLevel(0.5)])
        #expect(fx.published("event").map(\.jsonText) == [#"{"source":"knob","delta":1}"#, #"{"source":"knob","delta":1}"#])
        #expect(h.state.volume == .absolute(level: 0.5))
    }

    @Test func accelerationMultipliesFastDetents() {
        var h = Harness { $0.inputs.encoder.acceleration = true }
        h.send(.start(at: h.now))
        var fx: [SpeakerEffect] = []
        for _ in 0..<3 {
            for e in QuadratureDecoderTests.cycle(clockwise: false) { fx += h.edge(e.phaseA ? .encoderA : .encoderB, e.level, afterMs: 2) }
        }
        #expect(fx.audioRequests == [.setLevel(0.35), .setLevel(0.15), .setLevel(0)])
    }
}
