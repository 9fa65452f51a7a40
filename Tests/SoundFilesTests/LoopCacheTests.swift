// SPDX-License-Identifier: Apache-2.0
import Testing
import CSndfile
import Ambience
import SpeakerSystem
@testable import SoundFiles
#if canImport(Glibc)
import Glibc
#endif

/// Short loops kept as decoded PCM (`LoopCache`) against the same file
/// streamed with no budget, with real libsndfile and libsoxr files.
@Suite struct LoopCacheTests {
    static let flac16 = Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16)
    /// One step of the cache (1/16384) after `FileSound.headroom`, plus the
    /// float rounding of two paths through the same arithmetic.
    static let cacheStep = FileSound.headroom / 16_384 + 1e-6

    /// A 2.5-s mono 44.1 kHz FLAC of reproducible noise.
    private func monoFLAC(_ f: SoundFixture, seconds: Double = 2.5) -> String {
        f.write("mono.flac", format: Self.flac16, rate: 44_100, channels: 1, frames: Int(seconds * 44_100)) { i, _ in
            noise(i, 0, seed: 7, amplitude: 0.4)
        }
    }

    @Test func cachedLoopMatchesTheStreamedLoopOverSeveralPasses() throws {
        let f = SoundFixture(name: "cachematch")
        let p = monoFLAC(f)
        let budget = LoopMemoryBudget(bytes: 1 << 20)
        let cached = try LoopingDecoder(path: p, outputRate: 48_000, budget: budget)
        let streamed = try LoopingDecoder(path: p, outputRate: 48_000, budget: LoopMemoryBudget(bytes: 0))
        let cache = try #require(cached.cache)
        #expect(streamed.cache == nil)
        // The period is exact: (frames − X) input frames are a multiple of 147,
        // i.e. a whole number (·160/147) of output frames; mono stays mono.
        let period = cached.reader.frames - cached.crossfadeFrames
        #expect(period % 147 == 0)
        #expect(cache.frames == period / 147 * 160)
        #expect(cache.channels == 1 && cache.bytes == 2 * cache.frames)
        #expect(budget.reservedBytes == cache.bytes)
        let frames = 4 * 120_000  // 10 s: four passes of the 2.5-s file
        let a = renderSource({ cached.produce(into: $0, frames: $1, gain: FileSound.headroom) }, frames: frames)
        let b = renderSource({ streamed.produce(into: $0, frames: $1, gain: FileSound.headroom) }, frames: frames)
        #expect(cache.isComplete && cached.nextCacheFrame != nil, "the loop is served from memory")
        #expect(a.count == b.count)
        var worst: Float = 0
        for i in 0..<a.count { worst = max(worst, abs(a[i] - b[i])) }
        #expect(worst <= Self.cacheStep, "largest difference \(worst), one cache step is \(Self.cacheStep)")
        // The mono file is up-mixed: both sides carry the same samples.
        #expect(channel(a, 0) == channel(a, 1))
        // The file was decoded about once (one pass plus the capture margin), not four times.
        #expect(cached.framesDecoded < cached.reader.frames + 2 * LoopingDecoder.captureMargin)
        #expect(streamed.framesDecoded > 3 * cached.reader.frames)
    }

    @Test func aStereoLoopWithoutResamplingIsCachedFromTheCrossfadeOn() throws {
        let f = SoundFixture(name: "cache48")
        let frames = 48_000
        let p = f.write("st.wav", format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), rate: 48_000, channels: 2, frames: frames) {
            noise($0, $1, seed: 9)
        }
        let cached = try LoopingDecoder(path: p, outputRate: 48_000, budget: LoopMemoryBudget(bytes: 1 << 20))
        let streamed = try LoopingDecoder(path: p, outputRate: 48_000)
        let cache = try #require(cached.cache)
        #expect(cache.startFrame == cached.crossfadeFrames && cache.frames == frames - cached.crossfadeFrames)
        #expect(cache.channels == 2)
        let a = renderSource({ cached.produce(into: $0, frames: $1) }, frames: 5 * frames)
        let b = renderSource({ streamed.produce(into: $0, frames: $1) }, frames: 5 * frames)
        var worst: Float = 0
        for i in 0..<a.count { worst = max(worst, abs(a[i] - b[i])) }
        #expect(worst <= 0.5 / 16_384 + 1e-6, "largest difference \(worst)")
    }

    @Test func theBudgetIsSharedAndReleased() throws {
        let f = SoundFixture(name: "cachebudget")
        let p = monoFLAC(f)
        let one = try LoopingDecoder(path: p, outputRate: 48_000, budget: LoopMemoryBudget(bytes: 1 << 20))
        let bytes = try #require(one.cache).bytes
        let budget = LoopMemoryBudget(bytes: bytes + bytes / 2)
        var first: LoopingDecoder? = try LoopingDecoder(path: p, outputRate: 48_000, budget: budget)
        #expect(first?.cache != nil)
        // A second loop does not fit beside the first: it streams.
        let second = try LoopingDecoder(path: p, outputRate: 48_000, budget: budget)
        #expect(second.cache == nil)
        first = nil
        #expect(budget.reservedBytes == 0)
        let third = try LoopingDecoder(path: p, outputRate: 48_000, budget: budget)
        #expect(third.cache != nil && budget.reservedBytes == bytes)
        _ = first
    }

    @Test func loopsLongerThanTheLimitStream() throws {
        let f = SoundFixture(name: "cachelong")
        let p = monoFLAC(f, seconds: 3)
        let budget = LoopMemoryBudget(bytes: 64 << 20)
        let long = try LoopingDecoder(path: p, outputRate: 48_000, maxCachedSeconds: 2, budget: budget)
        #expect(long.cache == nil && budget.reservedBytes == 0)
        let short = try LoopingDecoder(path: p, outputRate: 48_000, maxCachedSeconds: 3, budget: budget)
        #expect(short.cache != nil)
    }

    @Test func aMonoFileIsResampledBeforeTheUpMix() throws {
        // The same material as a mono file and as a stereo file with equal
        // sides: the mono path (one channel through libsoxr, then copied to
        // both sides) gives what the stereo path gives on each side.
        let f = SoundFixture(name: "monoupmix")
        let frames = 44_100
        let mono = f.write("m.flac", format: Self.flac16, rate: 44_100, channels: 1, frames: frames) { i, _ in noise(i, 0, seed: 5) }
        let stereo = f.write("s.flac", format: Self.flac16, rate: 44_100, channels: 2, frames: frames) { i, _ in noise(i, 0, seed: 5) }
        let m = try LoopingDecoder(path: mono, outputRate: 48_000)
        let s = try LoopingDecoder(path: stereo, outputRate: 48_000)
        #expect(m.channels == 1 && s.channels == 2)
        let a = renderSource({ m.produce(into: $0, frames: $1) }, frames: 96_000)
        let b = renderSource({ s.produce(into: $0, frames: $1) }, frames: 96_000)
        var worst: Float = 0
        for i in 0..<a.count { worst = max(worst, abs(a[i] - b[i])) }
        #expect(worst < 1e-5, "mono vs stereo path differ by \(worst)")
    }

    @Test func aStreamedSoundHandsOverToTheCacheWithoutAGap() throws {
        let f = SoundFixture(name: "cachehandover")
        let p = monoFLAC(f, seconds: 1.5)
        let streamer = try FileStreamer(logger: Logger(component: "test", backend: MemoryLogBackend()), loopMemoryBytes: 1 << 20)
        try streamer.start()
        defer { streamer.shutdown() }
        let streamed = try FileSound(path: p, sampleRate: 48_000, streamer: streamer)
        let reference = try LoopingDecoder(path: p, outputRate: 48_000, budget: LoopMemoryBudget(bytes: 0))
        let stream = try #require(streamed.streamForTests)
        #expect(stream.cache != nil && streamer.loopBudget.reservedBytes == stream.cache?.bytes)
        let total = 6 * 48_000
        var a = [Float](repeating: 0, count: 2 * total)
        var done = 0
        while done < total {
            // Wait (generously) for read-ahead or the hand-over, as the audio thread's buffer would.
            let n = min(1024, total - done)
            var passes = 0
            while stream.ring.available < n && !stream.cacheReady.load(ordering: .acquiring) && passes < 100
                && streamer.awaitPass(timeoutMs: 10_000) {
                passes += 1
            }
            a.withUnsafeMutableBufferPointer { streamed.render(into: $0.baseAddress! + 2 * done, frames: n) }
            done += n
        }
        #expect(streamed.playsFromCacheForTests)
        #expect(streamed.starvedFrames == 0)
        let b = renderSource({ reference.produce(into: $0, frames: $1, gain: FileSound.headroom) }, frames: total)
        var worst: Float = 0
        for i in 0..<a.count { worst = max(worst, abs(a[i] - b[i])) }
        #expect(worst <= Self.cacheStep, "largest difference \(worst)")
        #expect(stream.framesDecodedForTests < 2 * 66_150)
        // The read-ahead thread hands the ring's memory back once the audio thread has left it.
        let drained = stream.ringDrained.load(ordering: .acquiring)
        #expect(drained)
        var passes = 0
        while !stream.ringDiscardedForTests && passes < 100 && streamer.awaitPass(timeoutMs: 10_000) { passes += 1 }
        #expect(stream.ringDiscardedForTests)
    }
}
