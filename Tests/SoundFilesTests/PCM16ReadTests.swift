// SPDX-License-Identifier: Apache-2.0
import Testing
import CSndfile
@testable import SoundFiles

/// 16-bit PCM is read as shorts and converted by SoundFiles (a plain read in
/// libsndfile): the floats must be exactly `sf_readf_float`'s.
@Suite struct PCM16ReadTests {
    @Test(arguments: [1, 2])
    func shortsPathEqualsLibsndfileFloats(channels: Int) throws {
        let f = SoundFixture(name: "pcm16-\(channels)")
        let p = f.write("n.wav", format: Int32(SF_FORMAT_WAV | SF_FORMAT_PCM_16), rate: 44_100, channels: channels, frames: 10_000) { i, c in
            noise(i, c, seed: 3, amplitude: 1.2)  // clips at full scale too
        }
        let reader = try SoundFileReader(path: p)
        #expect(reader.isPCM16)
        var ours = [Float](repeating: .nan, count: 2 * 10_000)
        let got = ours.withUnsafeMutableBufferPointer { reader.readStereo(into: $0.baseAddress!, count: 10_000) }
        #expect(got == 10_000)

        var info = SF_INFO()
        let file = try #require(sf_open(p, Int32(SFM_READ), &info))
        defer { sf_close(file) }
        var theirs = [Float](repeating: 0, count: channels * 10_000)
        _ = theirs.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, 10_000) }
        // libsndfile's frames as our stereo layout (mono duplicated). Typed
        // closure: Swift 6.0's type checker gives up on the inferred one.
        let expected = (0..<(2 * 10_000)).map { (k: Int) -> Float in
            let channel: Int = channels == 2 ? k % 2 : 0
            return theirs[(k / 2) * channels + channel]
        }
        #expect(ours.map(\.bitPattern) == expected.map(\.bitPattern))
    }
}
