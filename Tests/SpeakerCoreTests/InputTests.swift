// SPDX-License-Identifier: Apache-2.0
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
        #expect(up.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 1)], "played when the press began")
        let settled = h.advance(ms: 30)
        #expect(settled.published("event").first?.jsonText == #"{"source":"button","name":"playPause","gesture":"press"}"#)
        #expect(settled.audioRequests.isEmpty, "the release does not toggle back")
    }

    /// From paused, a long press still means stop: the press started playback
    /// 5 ms after its first edge, the long press stops it and ends the session.
    @Test func holdingPlayPauseFromPausedPlaysThenStops() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.edge(.playPause, true)
        let played = h.advance(ms: 5)
        #expect(played.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 1)])
        h.engineDoes(played)
        let held = h.advance(ms: 795)
        #expect(held.published("event").first?["gesture"] == .string("long"))
        #expect(held.audioRequests == [.pause(fadeMs: 400, ticket: 2)])
        let done = h.engineDoes(held)
        #expect(done.lastPublished("session")?["ended"] == .bool(true))
        h.edge(.playPause, false, afterMs: 200)
        #expect(h.advance(ms: 30).audioRequests.isEmpty, "the release adds nothing")
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

    /// next, previous and the encoder switch act 5 ms after a press's first
    /// edge (the line still active: not a spike); the release only publishes
    /// `press`, as before, and does not act again.
    @Test func nextPreviousAndTheEncoderSwitchDoTheirDefaultsWhenPressed() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.edge(.next, true)
        #expect(h.advance(ms: 4).audioRequests.isEmpty)
        let early = h.advance(ms: 1)
        #expect(early.audioRequests == [.play(soundID: "pink", fadeMs: 400, ticket: 1)])
        #expect(early.published("event").isEmpty, "the gesture is published at its release")
        h.edge(.next, false, afterMs: 45)
        let released = h.advance(ms: 30)
        #expect(released.audioRequests.isEmpty)
        #expect(released.published("event").first?["gesture"] == .string("press"))
        h.send(.engine(.playing(ticket: 1), at: h.now))
        h.edge(.previous, true)
        #expect(h.advance(ms: 5).audioRequests == [.switchTo(soundID: "white", crossfadeMs: 1500, ticket: 2)])
        h.edge(.previous, false, afterMs: 45); h.advance(ms: 30)
        h.send(.engine(.playing(ticket: 2), at: h.now))
        h.edge(.encoderSwitch, true)
        #expect(h.advance(ms: 5).audioRequests.isEmpty, "the encoder's switch acts on release (its hold is the sleep timer's)")
        h.edge(.encoderSwitch, false, afterMs: 45)
        #expect(h.advance(ms: 30).audioRequests == [.pause(fadeMs: 400, ticket: 3)])
    }

    /// Contact bounce on the first edges does not delay the early action; a
    /// spike shorter than 5 ms does nothing at all.
    @Test func bounceStillActsEarlyAndASpikeDoesNothing() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.edge(.next, true); h.edge(.next, false); h.edge(.next, true)
        #expect(h.advance(ms: 5).audioRequests.count == 1)
        h.edge(.next, false, afterMs: 60); h.advance(ms: 100)
        h.edge(.next, true); h.edge(.next, false, afterMs: 2)
        #expect(h.advance(ms: 200).audioRequests.isEmpty)
    }

    /// play/pause toggles when pressed, both ways: it pauses while playing
    /// and plays while paused; the release only publishes `press`.
    @Test func playPauseActsWhenPressed() {
        var h = Harness()
        h.send(.start(at: h.now))
        h.edge(.playPause, true)
        let played = h.advance(ms: 5)
        #expect(played.audioRequests == [.play(soundID: "white", fadeMs: 400, ticket: 1)], "paused: plays when pressed")
        h.edge(.playPause, false, afterMs: 45)
        #expect(h.advance(ms: 30).audioRequests.isEmpty, "the release does not toggle back")
        h.engineDoes(played)
        h.edge(.playPause, true, afterMs: 500)
        #expect(h.advance(ms: 5).audioRequests == [.pause(fadeMs: 400, ticket: 2)])
        h.edge(.playPause, false, afterMs: 45)
        let released = h.advance(ms: 30)
        #expect(released.audioRequests.isEmpty, "the release does not toggle back")
        #expect(released.published("event").first?["gesture"] == .string("press"))
    }

    /// With double press enabled, nothing acts before the gesture is known.
    @Test func doublePressEnabledWaitsForTheGesture() {
        var h = Harness { $0.inputs.doublePressMs = 300 }
        h.send(.start(at: h.now))
        h.edge(.next, true)
        #expect(h.advance(ms: 5).audioRequests.isEmpty)
        h.edge(.next, false, afterMs: 45)
        #expect(h.advance(ms: 30).audioRequests.isEmpty)
        #expect(h.advance(ms: 300).audioRequests == [.play(soundID: "pink", fadeMs: 400, ticket: 1)])
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
        #expect(h.state.volume.level == .absolute(level: 0.5))
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

/// `.down` from the button decoder (`reportsDown`): once per press, early when
/// the line is still active `confirmNs` after the first edge, else at the
/// debounced press; never without opting in.
@Suite struct ButtonDownTests {
    let timing = ButtonDecoder.Timing(debounceMs: 30, longPressMs: 800, doublePressMs: 0, reportsDown: true)

    @Test func downComesFiveMillisecondsAfterTheFirstEdgeThenPressAtTheRelease() {
        var d = ButtonDecoder(timing: timing)
        #expect(d.edge(isActive: true, at: .milliseconds(100)).isEmpty)
        #expect(d.nextDeadline == .milliseconds(105))
        #expect(d.advance(to: .milliseconds(105)) == [.down])
        #expect(d.advance(to: .milliseconds(140)).isEmpty, "the debounced press adds no second down")
        #expect(d.edge(isActive: false, at: .milliseconds(150)).isEmpty)
        #expect(d.advance(to: .milliseconds(180)) == [.press])
    }

    @Test func aLineBouncingAtTheConfirmInstantGetsDownFromTheDebounce() {
        var d = ButtonDecoder(timing: timing)
        _ = d.edge(isActive: true, at: .milliseconds(100))
        _ = d.edge(isActive: false, at: .milliseconds(104))
        _ = d.edge(isActive: true, at: .milliseconds(106))
        #expect(d.advance(to: .milliseconds(135)).isEmpty)
        #expect(d.advance(to: .milliseconds(136)) == [.down])
    }

    @Test func aSpikeGivesNoDownAndTheNextPressDoes() {
        var d = ButtonDecoder(timing: timing)
        _ = d.edge(isActive: true, at: .milliseconds(100))
        _ = d.edge(isActive: false, at: .milliseconds(102))
        #expect(d.advance(to: .milliseconds(400)).isEmpty)
        _ = d.edge(isActive: true, at: .milliseconds(500))
        #expect(d.advance(to: .milliseconds(505)) == [.down])
    }

    @Test func withoutOptingInThereIsNoDown() {
        var d = ButtonDecoder(timing: .init(debounceMs: 30, longPressMs: 800, doublePressMs: 0))
        _ = d.edge(isActive: true, at: .milliseconds(100))
        #expect(d.advance(to: .milliseconds(140)).isEmpty)
    }
}
