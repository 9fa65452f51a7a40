// SPDX-License-Identifier: Apache-2.0
import Testing
import AudioALSA
import Ambience
import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// AudioEngine against real alsa-lib file pcms. Serialized: the pacing checks
/// compare against the wall clock and there are only two cores.
@Suite(.serialized) struct AudioEngineTests {
    let rate = EngineHarness.rate

    @Test func playPinkWritesPacedStereoAudio() throws {
        let h = EngineHarness(name: "play")
        let started = EngineHarness.now()
        try h.engine.start()
        h.engine.send(.play(PinkNoise(), fadeMs: 20, ticket: 1))
        #expect(h.waitFor { $0.playingTicket == 1 }, "no playing(1); got \(h.reports)")
        #expect(h.waitForFrames(rate / 2))
        let elapsed = EngineHarness.now() - started
        let frames = h.fileFrames()
        // Pacing: never more than about a buffer (+ a period) ahead of the clock.
        #expect(Double(frames) <= elapsed * Double(rate) + 4096 + 2 * 1024, "\(frames) frames after \(elapsed) s")
        h.engine.shutdown(fadeMs: 20)
        let s = h.samples()
        let from = rate / 10, to = s.count / 2 - 4096
        try #require(to > from + rate / 4)
        let left = EngineHarness.rms(s, channel: 0, from: from, to: to)
        let right = EngineHarness.rms(s, channel: 1, from: from, to: to)
        // Pink at RMS ≈ 0.1 full scale ≈ 3277.
        #expect(left > 2000 && left < 5000, "left RMS \(left)")
        #expect(right > 2000 && right < 5000, "right RMS \(right)")
        #expect((from..<to).contains { s[2 * $0] != s[2 * $0 + 1] }, "channels identical")
        #expect(h.reports.contains { if case .realtimeScheduling = $0 { return true } else { return false } })
    }

    @Test func pauseFadesToSilenceStopsTheFileAndResumes() throws {
        let h = EngineHarness(name: "pause")
        try h.engine.start()
        h.engine.send(.play(PinkNoise(), fadeMs: 10, ticket: 1))
        #expect(h.waitForFrames(rate / 4))
        h.engine.send(.pause(fadeMs: 100, ticket: 2))
        #expect(h.waitFor { $0.pausedTicket == 2 }, "no paused(2); got \(h.reports)")
        // The fade's tail (a buffer of silence) is written, then the thread parks.
        let atPause = h.fileFrames()
        h.wait(seconds: 0.4) { false }
        let parked = h.fileFrames()
        h.wait(seconds: 0.3) { false }
        #expect(h.fileFrames() == parked, "file still growing while paused")
        // Bound: the period that completed the fade, a buffer of silence, and
        // the file plugin's own write-behind (up to two periods), plus one more
        // period of slack for a loaded machine (tests run in parallel).
        #expect(parked - atPause <= 4096 + 5 * 1024, "wrote \(parked - atPause) frames after the pause completed")
        let s = h.samples()
        let end = s.count / 2
        try #require(end > 4096 + rate / 10)
        #expect((end - 4096..<end).allSatisfy { s[2 * $0] == 0 && s[2 * $0 + 1] == 0 }, "tail not silent")
        // The fade reaches zero smoothly: no cut at the end of the sound.
        let lastSound = (0..<end).last { s[2 * $0] != 0 || s[2 * $0 + 1] != 0 } ?? 0
        let nearEnd = (max(0, lastSound - 240)...lastSound).map { max(abs(Int(s[2 * $0])), abs(Int(s[2 * $0 + 1]))) }.max() ?? 0
        #expect(nearEnd < 300, "last 5 ms before silence peak at \(nearEnd)")

        h.engine.send(.play(nil, fadeMs: 10, ticket: 3))
        #expect(h.waitFor { $0.playingTicket == 3 })
        #expect(h.waitForFrames(parked + rate / 4), "no audio after resuming")
    }

    @Test func raisingGainRaisesLevel() throws {
        let h = EngineHarness(name: "gain")
        try h.engine.start()
        h.engine.send(.setGain(0.1, rampMs: 0))
        h.engine.send(.play(PinkNoise(), fadeMs: 0, ticket: 1))
        #expect(h.waitForFrames(rate / 2))
        let mark = h.fileFrames()
        h.engine.send(.setGain(1.0, rampMs: 10))
        #expect(h.waitForFrames(mark + rate / 2))
        h.engine.shutdown(fadeMs: 0)
        let s = h.samples()
        let quiet = EngineHarness.rms(s, channel: 0, from: mark - rate / 4, to: mark)
        let loudEnd = s.count / 2 - 4096
        let loud = EngineHarness.rms(s, channel: 0, from: loudEnd - rate / 4, to: loudEnd)
        #expect(loud > 5 * quiet, "RMS \(quiet) → \(loud)")
    }

    @Test func aLongFadeOutReachesSilenceAndIsAnsweredByItsTicket() throws {
        let h = EngineHarness(name: "longfade")
        try h.engine.start()
        h.engine.send(.play(PinkNoise(), fadeMs: 0, ticket: 1))
        #expect(h.waitFor { $0.playingTicket == 1 })
        h.engine.send(.longFade(to: 0, overMs: 300, ticket: 7))
        h.engine.send(.longFade(to: 0, overMs: 0, ticket: 8))  // overtakes 7, done at once
        #expect(h.waitFor { $0.longFadeTicket == 8 }, "no longFadeDone(8); got \(h.reports)")
        let mark = h.fileFrames()
        h.engine.send(.longFade(to: 1, overMs: 200, ticket: 9))
        #expect(h.waitFor { $0.longFadeTicket == 9 }, "no longFadeDone(9); got \(h.reports)")
        #expect(h.waitForFrames(mark + rate / 2))
        h.engine.shutdown(fadeMs: 0)
        #expect(!h.reports.contains { $0.longFadeTicket == 7 }, "an overtaken fade is not answered")
        let s = h.samples()
        let end = s.count / 2 - 4096
        #expect(EngineHarness.rms(s, channel: 0, from: end - rate / 4, to: end) > 2000, "back at full level")
    }

    @Test func muteSilencesTheStreamAndUnmuteBringsItBack() throws {
        let h = EngineHarness(name: "mute")
        try h.engine.start()
        h.engine.send(.play(PinkNoise(), fadeMs: 0, ticket: 1))
        #expect(h.waitFor { $0.playingTicket == 1 })
        h.engine.send(.setMuted(true, rampMs: 20))
        let mark = h.fileFrames()
        #expect(h.waitForFrames(mark + rate))
        let s = h.samples()
        let end = s.count / 2 - 4096
        #expect(EngineHarness.rms(s, channel: 0, from: end - rate / 4, to: end) == 0, "muted: exact silence")
        h.engine.send(.setMuted(false, rampMs: 20))
        let back = h.fileFrames()
        #expect(h.waitForFrames(back + rate))
        h.engine.shutdown(fadeMs: 0)
        let t = h.samples()
        let tEnd = t.count / 2 - 4096
        #expect(EngineHarness.rms(t, channel: 0, from: tEnd - rate / 4, to: tEnd) > 2000)
    }

    @Test func switchingCrossfadesAndRetiresTheOldSourceToMain() throws {
        let h = EngineHarness(name: "switch")
        try h.engine.start()
        let pink = PinkNoise()
        h.engine.send(.play(pink, fadeMs: 0, ticket: 1))
        #expect(h.waitFor { $0.playingTicket == 1 })
        h.engine.send(.switchTo(BrownNoise(sampleRate: rate), crossfadeMs: 50, ticket: 2))
        #expect(h.waitFor { $0.playingTicket == 2 })
        #expect(h.waitFor { $0.retiredSource === pink }, "pink never handed back; got \(h.reports)")
    }

    @Test func badDeviceNameFailsNamingTheDevice() {
        let engine = AudioEngine(settings: .init(device: "no_such_pcm_ambience", sampleRate: 48_000, periodFrames: 1024, bufferFrames: 4096,
                                                    rewindMarginFrames: 256),
                                 logger: .init(component: "audio", backend: MemoryLogBackend()))
        #expect {
            try engine.start()
        } throws: { error in
            guard let e = error as? ALSAError else { return false }
            return e.function == "snd_pcm_open" && "\(e)".contains("no_such_pcm_ambience")
        }
        #expect(!engine.isRunning)
    }

    @Test func failedDeviceIsReportedAndRetriedUntilItWorks() throws {
        // A file pcm whose directory doesn't exist opens but fails every write;
        // creating the directory "plugs the device back in".
        let dir = "/tmp/ambience-\(getpid())-missing"
        rmdir(dir)
        let h = EngineHarness(name: "retry", directory: dir)
        try h.engine.start()
        h.engine.send(.play(PinkNoise(), fadeMs: 0, ticket: 7))
        #expect(h.waitFor { $0.isDeviceUnavailable }, "no deviceUnavailable; got \(h.reports)")
        // Reopening succeeds but writes keep failing: no flapping back to available.
        h.wait(seconds: 2) { false }
        #expect(!h.reports.contains { $0.isDeviceAvailable }, "reported available while broken: \(h.reports)")
        #expect(h.reports.filter { $0.isDeviceUnavailable }.count == 1)
        mkdir(dir, 0o700)
        defer { unlink(h.path); rmdir(dir) }
        #expect(h.waitFor(seconds: 8) { $0.isDeviceAvailable }, "device never came back; got \(h.reports)")
        #expect(h.waitFor { $0.playingTicket == 7 })
        #expect(h.waitForFrames(rate / 4))
    }

    @Test func deviceThatBreaksWhilePlayingIsReportedAndComesBack() throws {
        // A real alsa-lib file pcm writing into a pipe: closing the reading end
        // makes its writes fail (EIO), like a USB DAC pulled out mid-play.
        let fifo = FIFOTarget(name: "unplug")
        let settings = AudioEngine.Settings(device: "file:'\(fifo.path)',raw", sampleRate: rate, periodFrames: 1024, bufferFrames: 4096,
                                            rewindMarginFrames: 256)
        let logs = MemoryLogBackend()
        let engine = AudioEngine(settings: settings, logger: Logger(component: "audio", threshold: .debug, backend: logs))
        defer { engine.shutdown(fadeMs: 0) }
        var reports: [AudioEngine.Report] = []
        func wait(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = EngineHarness.now() + seconds
            while !condition() {
                if EngineHarness.now() > deadline { return false }
                var pfd = pollfd(fd: engine.reportFD, events: Int16(POLLIN), revents: 0)
                _ = poll(&pfd, 1, 10)
                fifo.drain()
                reports += engine.drainReports()
            }
            return true
        }
        try engine.start()
        engine.send(.play(PinkNoise(), fadeMs: 0, ticket: 1))
        #expect(wait(5) { reports.contains { $0.playingTicket == 1 } && fifo.bytesRead > 4 * rate / 4 })
        fifo.disconnect()
        #expect(wait(8) { reports.contains { $0.isDeviceUnavailable } }, "no deviceUnavailable after the reader left; got \(reports)")
        let unavailable = reports.compactMap { if case .deviceUnavailable(let r) = $0 { return r } else { return nil } }
        #expect(unavailable.first?.contains("snd_pcm_writei") == true, "\(unavailable)")
        #expect(logs.entries.contains { $0.message.contains("device unavailable") })
        // Plugged back in: the engine reopens it by itself and audio flows again.
        fifo.connect()
        let before = fifo.bytesRead
        #expect(wait(12) { reports.contains { $0.isDeviceAvailable } }, "device never came back; got \(reports)")
        #expect(wait(5) { fifo.bytesRead > before + 4 * rate / 4 })
    }

    /// A paused engine stops at once: nothing audible is queued, so no fade is
    /// rendered and the thread exits without writing a frame. Counted in
    /// frames, not timed (the machine is noisy); the playing twin below shows
    /// the same count does see a fade.
    @Test func shutdownWhilePausedWritesNoFade() throws {
        let h = EngineHarness(name: "shutdown-paused")
        try h.engine.start()
        h.engine.shutdown(fadeMs: 400)
        #expect(!h.engine.isRunning, "the audio thread was detached, not joined")
        #expect(h.fileFrames() == 0, "wrote \(h.fileFrames()) frames while shutting down paused")
    }

    /// Shutting down while playing renders the whole fade before the thread
    /// exits: at least the fade's frames reach the file after the request.
    @Test func shutdownWhilePlayingRendersTheFade() throws {
        let h = EngineHarness(name: "shutdown-playing")
        try h.engine.start()
        h.engine.send(.play(PinkNoise(), fadeMs: 0, ticket: 1))
        #expect(h.waitForFrames(rate / 4))
        let before = h.fileFrames()
        h.engine.shutdown(fadeMs: 400)
        #expect(!h.engine.isRunning, "the audio thread was detached, not joined")
        #expect(h.fileFrames() - before >= rate * 400 / 1000,
                "only \(h.fileFrames() - before) frames after a 400 ms fade was asked for")
        let s = h.samples()
        let end = s.count / 2
        let lastSound = (0..<end).last { s[2 * $0] != 0 || s[2 * $0 + 1] != 0 } ?? 0
        #expect(lastSound >= before + rate * 300 / 1000, "sound stopped \(lastSound - before) frames after the request")
    }
}
