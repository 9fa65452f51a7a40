// SPDX-License-Identifier: Apache-2.0
import Testing
import CSndfile
@testable import SoundFiles
#if canImport(Glibc)
import Glibc
#endif

/// FLAC is decoded with libFLAC directly (`FLACDecoder` behind
/// `SoundFileReader`); real FLAC files are written by libsndfile's encoder.
/// The samples must equal libsndfile's own decoding, and damaged files must
/// give a clear error or short reads, never a crash.
@Suite struct FLACDecoderTests {
    /// libsndfile's float frames of `path` (its own FLAC decoder), from `start`.
    static func libsndfileFrames(_ path: String, channels: Int, start: Int = 0, count: Int) -> [Float] {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return [] }
        defer { sf_close(file) }
        if start > 0 { sf_seek(file, sf_count_t(start), SEEK_SET) }
        var out = [Float](repeating: .nan, count: channels * count)
        let got = out.withUnsafeMutableBufferPointer { Int(sf_readf_float(file, $0.baseAddress, sf_count_t(count))) }
        return Array(out.prefix(channels * got))
    }

    static func bytes(_ path: String) -> [UInt8] {
        guard let f = fopen(path, "rb") else { return [] }
        defer { fclose(f) }
        var out = [UInt8](), chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBufferPointer { fread($0.baseAddress, 1, 65_536, f) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return out
    }

    @Test(arguments: [(1, SF_FORMAT_PCM_16), (2, SF_FORMAT_PCM_16), (1, SF_FORMAT_PCM_24), (2, SF_FORMAT_PCM_24)])
    func samplesEqualLibsndfileAndSeekLandsExactly(channels: Int, subtype: Int) throws {
        let f = SoundFixture(name: "flac-\(channels)-\(subtype)")
        let frames = 50_000
        let p = f.write("n.flac", format: Int32(SF_FORMAT_FLAC | subtype), rate: 44_100, channels: channels, frames: frames) { i, c in
            noise(i, c, seed: 5, amplitude: 0.9)
        }
        let reader = try SoundFileReader(path: p)
        #expect(reader.frames == frames && reader.channels == channels && reader.sampleRate == 44_100)
        #expect(reader.formatName.hasPrefix("FLAC"))
        #expect(reader.formatName.contains(subtype == SF_FORMAT_PCM_16 ? "16" : "24"))
        var ours = [Float](repeating: .nan, count: channels * frames)
        // Odd piece sizes, so reads straddle libFLAC's blocks.
        var done = 0
        while done < frames {
            let n = min(1_237, frames - done)
            let got = ours.withUnsafeMutableBufferPointer { reader.readNative(into: $0.baseAddress! + done * channels, count: n) }
            #expect(got == n)
            if got < n { break }
            done += n
        }
        #expect(ours == Self.libsndfileFrames(p, channels: channels, count: frames))
        #expect(ours.withUnsafeMutableBufferPointer { reader.readNative(into: $0.baseAddress!, count: 10) } == 0)  // end of stream

        for start in [31_111, 0, frames - 100] {
            try reader.seek(to: start)
            var part = [Float](repeating: .nan, count: channels * 100)
            #expect(part.withUnsafeMutableBufferPointer { reader.readNative(into: $0.baseAddress!, count: 100) } == 100)
            #expect(part == Self.libsndfileFrames(p, channels: channels, start: start, count: 100))
        }
        // The stereo read duplicates a mono file's samples.
        try reader.seek(to: 1_000)
        var stereo = [Float](repeating: .nan, count: 2 * 500)
        #expect(stereo.withUnsafeMutableBufferPointer { reader.readStereo(into: $0.baseAddress!, count: 500) } == 500)
        let native = Self.libsndfileFrames(p, channels: channels, start: 1_000, count: 500)
        let expected = (0..<1_000).map { (k: Int) -> Float in native[(k / 2) * channels + (channels == 2 ? k % 2 : 0)] }
        #expect(stereo == expected)
    }

    @Test func tagsComeFromTheVorbisComment() throws {
        let f = SoundFixture(name: "flac-tags")
        let p = f.write("t.flac", format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), rate: 48_000, channels: 1, frames: 4_800,
                        title: "Night rain") { i, _ in noise(i, 0) }
        let reader = try SoundFileReader(path: p)
        #expect(reader.title == "Night rain")
        #expect(reader.comment == nil)
    }

    @Test func garbageAfterTheSignatureIsAClearError() {
        let f = SoundFixture(name: "flac-garbage")
        let p = f.writeBytes("g.flac", Array("fLaC".utf8) + (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        #expect(throws: SoundFileError.self) { _ = try SoundFileReader(path: p) }
        do { _ = try SoundFileReader(path: p) } catch { #expect(error.reason.contains("libFLAC")) }
        let only = f.writeBytes("s.flac", Array("fLaC".utf8))
        #expect(throws: SoundFileError.self) { _ = try SoundFileReader(path: only) }
    }

    @Test func truncatedFileIsSkippedWithItsReason() throws {
        let f = SoundFixture(name: "flac-cut")
        let p = f.write("cut.flac", format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), rate: 44_100, channels: 2, frames: 88_200) { i, c in
            noise(i, c)
        }
        let whole = Self.bytes(p)
        f.writeBytes("cut.flac", Array(whole.prefix(whole.count * 3 / 4)))  // past the first second, before the end
        switch SoundDirectory.probe(path: p, fileName: "cut.flac") {
        case .success: Issue.record("a FLAC cut in half was accepted")
        case .failure(let error): #expect(error.reason.contains("truncated"), "\(error.reason)")
        }
        // Decoding it anyway reads what is there, then stops short.
        let reader = try SoundFileReader(path: p)
        var out = [Float](repeating: 0, count: 2 * 88_200)
        let got = out.withUnsafeMutableBufferPointer { reader.readNative(into: $0.baseAddress!, count: 88_200) }
        #expect(got > 44_100 && got < 88_200, "\(got)")
        #expect(reader.lastError.contains("libFLAC") || reader.lastError.contains("END_OF_STREAM"), "\(reader.lastError)")
    }

    /// Bytes overwritten inside the audio frames (a seeded sweep of damage):
    /// every file either fails to open with a reason or loops with its read
    /// errors counted; the process survives them all.
    @Test func damagedFramesNeverCrashAndAreCounted() throws {
        let f = SoundFixture(name: "flac-damage")
        let p = f.write("d.flac", format: Int32(SF_FORMAT_FLAC | SF_FORMAT_PCM_16), rate: 44_100, channels: 1, frames: 44_100) { i, _ in
            noise(i, 0, seed: 9)
        }
        let whole = Self.bytes(p)
        var rng: UInt64 = 0x1234_5678
        var counted = 0, refused = 0
        for trial in 0..<40 {
            var damaged = whole
            let hits = 1 + trial % 8
            for _ in 0..<hits {
                rng = rng &* 6364136223846793005 &+ 1442695040888963407
                let at = 100 + Int((rng >> 33) % UInt64(damaged.count - 100))
                damaged[at] ^= UInt8(truncatingIfNeeded: rng >> 13) | 1
            }
            let name = "d\(trial).flac"
            f.writeBytes(name, damaged)
            do {
                let decoder = try LoopingDecoder(path: f.path(name), outputRate: 48_000)
                _ = renderSource({ decoder.produce(into: $0, frames: $1) }, frames: 96_000)
                if decoder.readErrors > 0 { counted += 1 }
            } catch {
                refused += 1
                #expect(!error.reason.isEmpty)
            }
        }
        print("damaged FLAC: \(counted) of 40 looped with read errors counted, \(refused) refused")
        #expect(counted + refused > 30)
    }
}
