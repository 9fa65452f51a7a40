// SPDX-License-Identifier: Apache-2.0
import Testing
import CSndfile
import Ambience
import SpeakerSystem
@testable import SoundFiles
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LoopAndStreamTests {
    static let wav = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)

    @Test func loopJoinHasNoJumpBeyondTheMaterialsOwn() throws {
        // Tail at +0.5, head at −0.5: a plain loop would jump by 1.0.
        let f = SoundFixture(name: "loopdc")
        let frames = 24_000
        let p = f.write("step.wav", format: Self.wav, rate: 48_000, channels: 2, frames: frames) { i, _ in i < frames / 2 ? -0.5 : 0.5 }
        let sound = try FileSound(path: p, sampleRate: 48_000, streamer: nil)
        let out = channel(renderSource(sound.render, frames: 5 * frames), 0)
        // The material's own step (−0.5 → +0.5 at its middle) recurs once per
        // pass; pass 1 is the whole file, later passes start after the head
        // (x frames) because the head was played inside the crossfade.
        let x = frames / 4
        var expected = [frames / 2]
        var next = frames + frames / 2 - x
        while next < out.count { expected.append(next); next += frames - x }
        var steps: [Int] = []
        var otherJump: Float = 0
        for i in 1..<out.count {
            let d = abs(out[i] - out[i - 1])
            if d > 0.01 { steps.append(i) } else { otherJump = max(otherJump, d) }
        }
        #expect(steps == expected, "steps at \(steps), expected \(expected)")
        // Everywhere else (loop joins included) the signal moves smoothly.
        #expect(otherJump < 2.5 * FileSound.headroom / Float(x), "largest other jump \(otherJump)")
    }

    @Test func loopedNoiseKeepsItsLevelAndStaysWithinMaterialJumps() throws {
        let f = SoundFixture(name: "loopnoise")
        let frames = 48_000
        // Near-Gaussian noise (a sum of four uniforms), like recorded ambience: an
        // equal-power mix of two such signals has the same distribution, so its
        // sample-to-sample jumps stay those of the material.
        func gauss(_ i: Int, _ c: Int) -> Float { (0..<4).reduce(0) { $0 + noise(i, c, seed: UInt64($1 + 1), amplitude: 0.15) } }
        let p = f.write("noise.wav", format: Self.wav, rate: 48_000, channels: 2, frames: frames) { gauss($0, $1) }
        let sound = try FileSound(path: p, sampleRate: 48_000, streamer: nil)
        let out = channel(renderSource(sound.render, frames: 4 * frames), 0)
        let material = maxJump((0..<frames).map { gauss($0, 0) * FileSound.headroom })
        #expect(maxJump(out) <= material * 1.05, "jump \(maxJump(out)) vs material \(material)")
        let block = 2_400
        let levels = stride(from: 0, to: out.count - block, by: block).map { 20 * log10(rms(out, $0, $0 + block)) }
        let mean = levels.reduce(0, +) / Float(levels.count)
        #expect(levels.allSatisfy { abs($0 - mean) < 1.0 }, "block levels \(levels.min()!)…\(levels.max()!) dB around \(mean)")
    }

    @Test func resamplesToTheOutputRate() throws {
        let f = SoundFixture(name: "resample")
        let rate = 44_100
        let p = f.write("tone.flac", format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_24), rate: rate, channels: 1, frames: 2 * rate) { i, _ in
            0.5 * sinf(2 * .pi * 1000 * Float(i) / Float(rate))
        }
        let sound = try FileSound(path: p, sampleRate: 48_000, streamer: nil)
        let out = channel(renderSource(sound.render, frames: 48_000), 1)
        var crossings = 0
        for i in 4800..<43_200 where out[i - 1] < 0 && out[i] >= 0 { crossings += 1 }
        #expect(abs(crossings - 800) <= 1, "\(crossings) rising zero crossings in 0.8 s")
        #expect(abs(rms(out, 4800, 43_200) - 0.5 * FileSound.headroom / Float(2).squareRoot()) < 0.01)
    }

    @Test func streamedOutputEqualsDirectDecodingAndMemoryIsBounded() throws {
        let f = SoundFixture(name: "stream")
        let seconds = 20
        let p = f.write("long.ogg", format: Int32(SF_FORMAT_OGG | SF_FORMAT_VORBIS), rate: 32_000, channels: 2, frames: seconds * 32_000) {
            noise($0, $1, seed: 3)
        }
        let streamer = try FileStreamer(logger: Logger(component: "test", backend: MemoryLogBackend()))
        try streamer.start()
        defer { streamer.shutdown() }
        let streamed = try FileSound(path: p, sampleRate: 48_000, streamer: streamer)
        let direct = try FileSound(path: p, sampleRate: 48_000, streamer: nil)
        #expect(streamer.streamCount == 1)
        // Read-ahead holds about a second, not the file.
        let stream = try #require(streamed.streamForTests)
        #expect(stream.ring.capacity <= 2 * 48_000)
        let total = 3 * 48_000
        var a = [Float](repeating: 0, count: 2 * total)
        var done = 0
        while done < total {
            // Let read-ahead catch up, as the audio thread's buffer would (bounded).
            let n = min(1024, total - done)
            var passes = 0
            while stream.ring.available < n && passes < 100 && streamer.awaitPass(timeoutMs: 10_000) { passes += 1 }
            a.withUnsafeMutableBufferPointer { streamed.render(into: $0.baseAddress! + 2 * done, frames: n) }
            done += n
        }
        let b = renderSource(direct.render, frames: total)
        #expect(streamed.starvedFrames == 0)
        #expect(a == b, "streamed and direct decoding differ")
        let decoded = stream.framesDecodedForTests
        #expect(decoded < 32_000 * 6, "decoded \(decoded) frames ahead for 3 s played")
        _ = consume(streamed)
    }

    @Test func vanishedFileFailsWithItsName() {
        #expect(throws: SoundFileError.self) { try FileSound(path: "/tmp/none-\(getpid()).wav", sampleRate: 48_000, streamer: nil) }
    }

    private func consume(_ s: FileSound) -> Bool { true }
}
