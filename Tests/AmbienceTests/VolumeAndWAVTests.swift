// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience

@Suite struct VolumeCurveTests {
    @Test func endpointsAndMidpoint() {
        #expect(VolumeCurve.gain(level: 0) == 0)
        #expect(VolumeCurve.gain(level: -1) == 0)
        #expect(VolumeCurve.gain(level: 1) == 1)
        #expect(VolumeCurve.gain(level: 2) == 1)
        #expect(abs(VolumeCurve.gain(level: 0.5) - 0.056234) < 1e-5)  // −25 dB
        #expect(abs(VolumeCurve.gain(level: 0.001) - 0.0031838) < 1e-5)  // ≈ −50 dB
    }

    @Test func inverseRoundTripsAndIsMonotonic() {
        var previous: Float = 0
        for step in 1...100 {
            let level = Double(step) / 100
            let g = VolumeCurve.gain(level: level)
            #expect(g > previous)
            previous = g
            #expect(abs(VolumeCurve.level(gain: g) - level) < 1e-5)
        }
        #expect(VolumeCurve.level(gain: 0) == 0)
    }
}

@Suite struct WAVFormatTests {
    @Test func canonicalHeader() {
        let h = WAVFormat.header(sampleRate: 48_000, channels: 2, frames: 1000)
        #expect(h.count == 44)
        #expect(Array(h[0..<4]) == Array("RIFF".utf8) && Array(h[8..<16]) == Array("WAVEfmt ".utf8))
        func le32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(h[at + $1]) << (8 * $1) } }
        #expect(le32(4) == 36 + 4000)
        #expect(le32(24) == 48_000 && le32(28) == 192_000)
        #expect(h[22] == 2 && h[32] == 4 && h[34] == 16)
        #expect(Array(h[36..<40]) == Array("data".utf8) && le32(40) == 4000)
    }
}
