// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience

/// A source whose every frame is different (a counter), so a replayed span
/// that repeats or skips source frames shows up as a mismatch.
final class CounterSource: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: used by one test thread.
    private var frame = 0
    let scale: Float
    init(scale: Float = 1) { self.scale = scale }
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        for i in 0..<frames {
            let v = Float((frame + i) % 997) / 997 * scale
            buffer[2 * i] = v
            buffer[2 * i + 1] = -v
        }
        frame += frames
    }
}

/// Rewinding what the renderer produced last and rendering it again with a new
/// request must sound exactly as if the request had arrived at the rewound frame:
/// the same frames, bit for bit, as a renderer that never rendered past it.
@Suite struct RewindTests {
    static let rate = 48_000
    static let period = 1024

    /// A renderer as the audio thread makes it (period chunks, a 4096-frame history).
    static func renderer(history: Int = 4096) -> AmbienceRenderer {
        AmbienceRenderer(sampleRate: rate, maxFrames: period, historyFrames: history)
    }

    /// Renders `frames` in periods, as the audio thread does (float output).
    static func periods(_ r: AmbienceRenderer, _ frames: Int) -> [Float] {
        var out: [Float] = []
        var left = frames
        while left > 0 {
            let n = min(period, left)
            out += r.floats(n).samples
            left -= n
        }
        return out
    }

    /// Reference: renders `before` frames, applies `request`, renders `after`.
    /// Rewound: renders `before + rewound`, rewinds `rewound`, applies `request`,
    /// renders `after`. Returns both tails.
    static func compare(before: Int, rewound: Int, after: Int, forSwitch: Bool = false,
                        setup: (AmbienceRenderer) -> Void, request: (AmbienceRenderer) -> Void) -> (reference: [Float], rewound: [Float], took: Int) {
        let a = renderer(history: 0)
        setup(a)
        _ = periods(a, before)
        request(a)
        let reference = periods(a, after)

        let b = renderer()
        setup(b)
        _ = periods(b, before + rewound)
        #expect(b.rewindableFrames(forSwitch: forSwitch) >= rewound)
        let took = b.rewind(frames: rewound)
        request(b)
        let again = periods(b, after)
        return (reference, again, took)
    }

    @Test func aPauseAfterARewindIsThePauseAtTheRewoundFrame() {
        let (reference, again, took) = Self.compare(before: 5000, rewound: 3000, after: 8000,
            setup: { $0.play(CounterSource(), fadeFrames: 0) },
            request: { $0.pause(fadeFrames: 4800) })
        #expect(took == 3000)
        #expect(again == reference)
        #expect(reference.suffix(100).allSatisfy { $0 == 0 }, "the fade completed")
    }

    @Test func aGainChangeAfterARewindIsTheChangeAtTheRewoundFrameEvenMidRamp() {
        let (reference, again, took) = Self.compare(before: 4321, rewound: 2777, after: 6000,
            setup: { $0.play(CounterSource(), fadeFrames: 0); $0.setGain(0.5, rampFrames: 48_000) },
            request: { $0.setGain(0.9, rampFrames: 2880) })
        #expect(took == 2777)
        #expect(again == reference)
    }

    @Test func aPauseDuringAFadeInRewindsIntoTheFade() {
        let (reference, again, _) = Self.compare(before: 1500, rewound: 2500, after: 6000,
            setup: { $0.play(CounterSource(), fadeFrames: 9600) },
            request: { $0.pause(fadeFrames: 4800) })
        #expect(again == reference)
    }

    @Test func aSwitchAfterARewindStartsItsCrossfadeAtTheRewoundFrame() {
        let (reference, again, took) = Self.compare(before: 6000, rewound: 3500, after: 12_000, forSwitch: true,
            setup: { $0.play(CounterSource(), fadeFrames: 0) },
            request: { $0.crossfade(to: CounterSource(scale: 0.5), frames: 9600) })
        #expect(took == 3500)
        #expect(again == reference)
        // After the crossfade only the new source (half scale) plays.
        #expect(again.suffix(200).allSatisfy { abs($0) <= 0.5 })
    }

    @Test func theS16OutputOfARewoundPauseMatchesToo() {
        func s16(_ r: AmbienceRenderer, _ frames: Int) -> [Int16] {
            var out = [Int16](repeating: 0, count: 2 * frames)
            var done = 0
            out.withUnsafeMutableBufferPointer { buf in
                while done < frames {
                    let n = min(Self.period, frames - done)
                    r.render(into: buf.baseAddress! + 2 * done, frames: n)
                    done += n
                }
            }
            return out
        }
        let a = Self.renderer(history: 0)
        a.play(CounterSource(), fadeFrames: 0)
        a.setGain(0.7, rampFrames: 0)
        _ = s16(a, 3072)
        a.pause(fadeFrames: 4800)
        let reference = s16(a, 6000)
        let b = Self.renderer()
        b.play(CounterSource(), fadeFrames: 0)
        b.setGain(0.7, rampFrames: 0)
        _ = s16(b, 3072 + 4000)  // the steady path records its dry frames too
        #expect(b.rewind(frames: 4000) == 4000)
        b.pause(fadeFrames: 4800)
        #expect(s16(b, 6000) == reference)
    }

    @Test func aSecondRewindDuringTheReplayStillMatches() {
        let a = Self.renderer(history: 0)
        a.play(CounterSource(), fadeFrames: 0)
        _ = Self.periods(a, 3000)
        a.setGain(0.5, rampFrames: 2880)
        _ = Self.periods(a, 1000)
        a.setGain(0.2, rampFrames: 2880)
        let reference = Self.periods(a, 7000)

        let b = Self.renderer()
        b.play(CounterSource(), fadeFrames: 0)
        _ = Self.periods(b, 6000)
        #expect(b.rewind(frames: 3000) == 3000)
        b.setGain(0.5, rampFrames: 2880)
        _ = Self.periods(b, 1000 + 2500)  // part of the replay, then new frames
        #expect(b.isReplaying == false)
        #expect(b.rewindableFrames(forSwitch: false) == 3500, "back to the first request, not before")
        #expect(b.rewind(frames: 2500) == 2500)
        b.setGain(0.2, rampFrames: 2880)
        #expect(Self.periods(b, 7000) == reference)
    }

    @Test func aRewindNeverReachesBeforeTheLastRequestNorPastTheHistory() {
        let r = Self.renderer(history: 4096)
        #expect(r.rewindableFrames(forSwitch: false) == 0)
        r.play(CounterSource(), fadeFrames: 0)
        _ = Self.periods(r, 1000)
        #expect(r.rewindableFrames(forSwitch: false) == 1000)
        _ = Self.periods(r, 9000)
        #expect(r.rewindableFrames(forSwitch: false) == 4096)
        r.setGain(0.5, rampFrames: 100)
        #expect(r.rewindableFrames(forSwitch: false) == 0)
        #expect(r.rewind(frames: 10) == 0)
        let none = AmbienceRenderer(sampleRate: Self.rate, maxFrames: Self.period)
        none.play(CounterSource(), fadeFrames: 0)
        _ = Self.periods(none, 3000)
        #expect(none.rewindableFrames(forSwitch: false) == 0, "no history, no rewind")
    }

    @Test func aSwitchMayRewindOnlyIntoOneSteadyVoice() {
        let r = Self.renderer()
        r.play(CounterSource(), fadeFrames: 0)
        _ = Self.periods(r, 5000)
        r.crossfade(to: CounterSource(scale: 0.5), frames: 4800)
        _ = Self.periods(r, 3000)
        #expect(r.rewindableFrames(forSwitch: true) == 0, "mid-crossfade")
        #expect(r.rewindableFrames(forSwitch: false) == 3000)
        _ = Self.periods(r, 1800 + 2048)  // the crossfade ends in the first period
        let steady = r.rewindableFrames(forSwitch: true)
        #expect(steady > 0 && steady <= 2048 + 1024, "only the periods rendered from the one voice: \(steady)")
    }

    @Test func aSwitchDuringAReplayOfACrossfadeWaitsForTheReplayEnd() {
        // A gain rewind into a crossfade replays the recorded mix; a switch then
        // can't start inside it (two voices), so it starts where the replay ends:
        // no frame of the replaced sound is heard twice.
        let r = Self.renderer()
        r.play(CounterSource(), fadeFrames: 0)
        _ = Self.periods(r, 3000)
        r.crossfade(to: CounterSource(scale: 0.5), frames: 48_000)
        _ = Self.periods(r, 3000)
        let recorded = r.rewind(frames: 2000)
        #expect(recorded == 2000)
        r.setGain(0.5, rampFrames: 0)
        r.crossfade(to: CounterSource(scale: 0.25), frames: 960)
        #expect(r.isReplaying)
        let replay = Self.periods(r, 2000)
        #expect(!r.isReplaying)
        let after = Self.periods(r, 4000)
        #expect(replay.contains { abs($0) > 0.25 * 0.5 }, "the replay is still the old mix")
        #expect(after.suffix(2000).allSatisfy { abs($0) <= 0.25 * 0.5 + 1e-6 }, "then the switch completed")
    }

    /// Renders `before`, then (rewinding `rewound` frames first when given)
    /// pauses with a fade shorter than the rewound span, renders `paused`
    /// frames, runs `whilePaused`, resumes and renders `after`. Returns what
    /// was rendered from the pause on.
    static func pauseAndResume(rewound: Int?, crossfading: Bool = false,
                               whilePaused: (AmbienceRenderer) -> Void = { _ in }) -> [Float] {
        let r = renderer(history: rewound == nil ? 0 : 4096)
        r.play(CounterSource(), fadeFrames: 0)
        if crossfading {
            _ = periods(r, 2000)
            r.crossfade(to: CounterSource(scale: 0.5), frames: 48_000)
        }
        _ = periods(r, 3000 + (rewound ?? 0))
        if let rewound { #expect(r.rewind(frames: rewound) == rewound) }
        r.pause(fadeFrames: 480)
        let paused = periods(r, 5000)
        #expect(r.isSilent)
        whilePaused(r)
        r.play(nil, fadeFrames: 480)
        return paused + periods(r, 6000)
    }

    @Test func aPauseCompletingDuringAReplayResumesWithTheFramesNeverPlayed() {
        // The fade (480 frames) ends 3,520 frames into a 4,000-frame replay:
        // those recorded frames were taken back from the device, so resuming
        // plays them first, exactly as if the pause had come without a rewind.
        let reference = Self.pauseAndResume(rewound: nil)
        let again = Self.pauseAndResume(rewound: 4000)
        #expect(again.count == reference.count)
        let differ = again.indices.first { $0 >= reference.count || again[$0] != reference[$0] }
        #expect(differ == nil, "first difference at sample \(differ ?? -1)")
    }

    @Test func aSwitchWhilePausedMidReplayDropsTheReplay() {
        // Paused in the replay of a crossfade (two voices), then another sound
        // chosen: resuming plays only it, not the rest of the replay first.
        let switchTo: (AmbienceRenderer) -> Void = { $0.crossfade(to: CounterSource(scale: 0.25), frames: 4800) }
        let reference = Self.pauseAndResume(rewound: nil, crossfading: true, whilePaused: switchTo)
        let again = Self.pauseAndResume(rewound: 4000, crossfading: true, whilePaused: switchTo)
        #expect(again.count == reference.count)
        let differ = again.indices.first { $0 >= reference.count || again[$0] != reference[$0] }
        #expect(differ == nil, "first difference at sample \(differ ?? -1)")
        #expect(again.suffix(12_000).allSatisfy { abs($0) <= 0.25 }, "the old sounds came back")
    }
}
