// SPDX-License-Identifier: Apache-2.0
import Testing
@testable import AudioALSA
import Ambience
import SpeakerSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The fallback for a device that can't take back what it has queued: it is
/// asked once, its refusal is remembered, and changes are heard after the
/// queued audio, as without rewinding. The device is alsa-lib's `rate` pcm
/// (at 48 → 48 kHz it passes samples unchanged, and it never rewinds:
/// `snd_pcm_rewindable` and `snd_pcm_rewind` return 0 in pcm_rate.c) writing
/// a file, behind a queue the test empties by hand (`ManualClockPCM`), so
/// every position below is a frame count, not a time.
@Suite(.serialized) struct NoRewindTests {
    static let period = 1024
    static let buffer = 4096

    /// Frame i carries its own index: S16 = 2 · (8192 + i % 8192) at gain 1,
    /// half that at gain 0.5, so the output shows any gap, repeat or gain change.
    final class CountingSource: SoundSource, @unchecked Sendable {
        // @unchecked Sendable: used by one thread at a time (the audio thread).
        private var next = 0
        func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
            for f in 0..<frames {
                let value = Float(2 * (8192 + (next + f) % 8192)) / 32767
                buffer[2 * f] = value
                buffer[2 * f + 1] = -value
            }
            next += frames
        }
        static func expected(frame i: Int, halved: Bool) -> Int16 {
            let full = 2 * (8192 + i % 8192)
            return Int16(halved ? full / 2 : full)
        }
    }

    /// Holds the device the engine opened, for the test thread.
    final class OpenedDevice: Sendable {
        let device = Mutex<ManualClockPCM?>(nil)
    }

    /// What one run saw: the device's calls, the engine's reports and logs,
    /// the file, and where the writer was when each gain change was sent.
    struct Run {
        var calls: [ManualClockPCM.Call]
        var reports: [AudioEngine.Report]
        var logs: MemoryLogBackend
        var samples: [Int16]
        /// Frames accepted when the period blocked at each change went in.
        var firstChange: Int
        var secondChange: Int
        /// Frames accepted before shutting down.
        var heardUntil: Int
    }

    /// Plays `CountingSource` into the pcm `name` of `configuration` behind a
    /// `ManualClockPCM`; with the queue full, sets the gain to 0.5, lets nine
    /// periods play, sets it back to 1 and lets nine more play.
    static func run(_ name: String, configuration: String, file path: String) throws -> Run {
        let opened = OpenedDevice()
        let settings = AudioEngine.Settings(device: name, sampleRate: 48_000, periodFrames: period,
                                            bufferFrames: buffer, rewindMarginFrames: 256)
        let logs = MemoryLogBackend()
        let engine = AudioEngine(settings: settings, logger: Logger(component: "audio", threshold: .debug, backend: logs)) { s throws(ALSAError) in
            let pcm = ManualClockPCM(try ALSAPlayback(device: s.device, configuration: configuration, sampleRate: s.sampleRate,
                                                      periodFrames: s.periodFrames, bufferFrames: s.bufferFrames))
            opened.device.withLock { $0 = pcm }
            return pcm
        }
        try engine.start()
        defer { engine.shutdown(fadeMs: 0) }
        let pcm = try #require(opened.device.withLock { $0 })
        #expect(engine.negotiated?.bufferFrames == buffer && engine.negotiated?.periodFrames == period)

        /// The device plays `periods` periods, one at a time, each time waiting
        /// until the writer has refilled its queue and blocks again.
        func playPeriods(_ periods: Int) throws {
            for _ in 0..<periods {
                let writes = pcm.acceptedWrites
                pcm.play(frames: period)
                try #require(pcm.waitUntilBlocked(afterWrites: writes), "the writer never refilled the queue")
            }
        }

        engine.send(.play(CountingSource(), fadeMs: 0, ticket: 1))
        try #require(pcm.waitUntilBlocked(afterWrites: buffer / period - 1), "the engine never filled the device")
        #expect(pcm.queuedFrames == buffer)
        try playPeriods(4)  // a buffer has played: the renderer's history is full
        #expect(pcm.calls.isEmpty, "asked before any change: \(pcm.calls)")
        // The writer is blocked with a period; the change is applied after it.
        let firstChange = pcm.acceptedFrames + period
        engine.send(.setGain(0.5, rampMs: 0))
        try playPeriods(9)
        let secondChange = pcm.acceptedFrames + period
        engine.send(.setGain(1.0, rampMs: 0))
        try playPeriods(9)
        let heardUntil = pcm.acceptedFrames
        pcm.runFree()
        engine.shutdown(fadeMs: 0)
        return Run(calls: pcm.calls, reports: engine.drainReports(), logs: logs, samples: read(path),
                   firstChange: firstChange, secondChange: secondChange, heardUntil: heardUntil)
    }

    /// Frames in [0, `until`) that don't carry their own index at the gain
    /// expected there (halved in `halved`), at most five.
    static func wrongFrames(_ samples: [Int16], until: Int, halved: Range<Int>) -> [String] {
        guard samples.count / 2 >= until else { return ["the file holds \(samples.count / 2) of \(until) frames"] }
        var wrong: [String] = []
        for i in 0..<until where wrong.count < 5 {
            let want = CountingSource.expected(frame: i, halved: halved.contains(i))
            if samples[2 * i] != want || samples[2 * i + 1] != -want {
                wrong.append("frame \(i): \(samples[2 * i]), \(samples[2 * i + 1]) instead of \(want), \(-want)")
            }
        }
        return wrong
    }

    @Test func aDeviceThatCannotRewindIsAskedOnceAndChangesWaitForItsQueue() throws {
        let path = "/tmp/ambience-\(getpid())-norewind.raw"
        unlink(path)
        defer { unlink(path) }
        let run = try Self.run("norewind", configuration: """
            pcm.norewind {
                type rate
                slave { pcm { type file file "\(path)" format raw slave.pcm { type null } } rate 48000 }
            }
            """, file: path)
        // Asked once, at the first change, with a full queue; refused; never again.
        #expect(run.calls == [.rewindable(answer: 0, queued: Self.buffer, accepted: run.firstChange)], "\(run.calls)")
        let refusals = run.reports.compactMap { if case .rewindUnavailable(let reason) = $0 { return reason } else { return nil } }
        #expect(refusals == ["snd_pcm_rewindable is 0 with \(Self.buffer) frames queued"], "\(refusals)")
        #expect(!run.reports.contains { if case .rewinds = $0 { return true } else { return false } })
        #expect(run.logs.entries.contains { $0.message.contains("can't rewind its queue") })
        // Every frame once, in order; each change starts where the writer was,
        // so it is heard after the queue the device held (a buffer) has played.
        #expect(Self.wrongFrames(run.samples, until: run.heardUntil, halved: run.firstChange..<run.secondChange).isEmpty,
                "\(Self.wrongFrames(run.samples, until: run.heardUntil, halved: run.firstChange..<run.secondChange))")
    }

    /// The twin that shows the run can see a rewind: alsa-lib's `file` pcm
    /// takes back what it has not yet written out (up to a buffer), so each
    /// change is asked about, all but the margin is taken back, and the change
    /// starts a margin after what the device plays, with no frame lost or repeated.
    @Test func aDeviceThatCanRewindHearsEachChangeAfterTheMargin() throws {
        let path = "/tmp/ambience-\(getpid())-canrewind.raw"
        unlink(path)
        defer { unlink(path) }
        let run = try Self.run("canrewind", configuration: """
            pcm.canrewind { type file file "\(path)" format raw slave.pcm { type null } }
            """, file: path)
        // Asked at each change; each time all but the 256-frame margin of the
        // device's queue was taken back.
        try #require(run.calls.count == 4, "\(run.calls)")
        let taken = Self.buffer - 256
        #expect(run.calls[0] == .rewindable(answer: Self.buffer, queued: Self.buffer, accepted: run.firstChange))
        #expect(run.calls[1] == .rewind(frames: taken, answer: taken, queuedAfter: 256))
        guard case .rewindable(_, let queued, let accepted) = run.calls[2],
              case .rewind(_, let takenAgain, let queuedAfter) = run.calls[3] else {
            Issue.record("\(run.calls)")
            return
        }
        #expect(accepted == run.secondChange && queued > 256 && queuedAfter == 256, "\(run.calls)")
        #expect(!run.reports.contains { if case .rewindUnavailable = $0 { return true } else { return false } })
        let halved = (run.firstChange - taken)..<(run.secondChange - takenAgain)
        #expect(Self.wrongFrames(run.samples, until: run.heardUntil, halved: halved).isEmpty,
                "\(Self.wrongFrames(run.samples, until: run.heardUntil, halved: halved))")
    }

    /// Configuration text that doesn't parse fails the open, naming the call.
    @Test func unreadableConfigurationFailsNamingTheCall() {
        #expect {
            _ = try ALSAPlayback(device: "x", configuration: "pcm.x { type", sampleRate: 48_000, periodFrames: 1024, bufferFrames: 4096)
        } throws: { error in
            (error as? ALSAError)?.function == "snd_config_load"
        }
    }

    static func read(_ path: String) -> [Int16] {
        guard let f = fopen(path, "rb") else { return [] }
        defer { fclose(f) }
        var st = stat()
        guard stat(path, &st) == 0 else { return [] }
        var out = [Int16](repeating: 0, count: Int(st.st_size) / 2)
        let n = out.withUnsafeMutableBytes { fread($0.baseAddress, 2, $0.count / 2, f) }
        return Array(out.prefix(n))
    }
}
