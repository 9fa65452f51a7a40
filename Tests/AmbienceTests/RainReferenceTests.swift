// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience

/// The block-wise rain against the generator it replaced (`ReferenceRain`):
/// the same spectrum, level and droplet peakiness, and the same samples
/// whatever the request sizes.
@Suite struct RainReferenceTests {
    static let lows: [Double] = [125, 250, 500, 1000, 2000, 4000, 8000]

    /// Octave-band densities (dB), RMS and kurtosis of one channel.
    func measure(_ stereo: [Float], channel: Int) -> (bands: [Double], rms: Double, kurtosis: Double) {
        let x = Spectrum.channel(stereo, channel)
        let psd = Spectrum.powerSpectrum(x, size: 4096)
        let bands = Spectrum.octaveDensitiesDB(psd, size: 4096, sampleRate: 48_000, lows: Self.lows)
        let mean = Spectrum.mean(x)
        var m2 = 0.0, m4 = 0.0
        for v in x { let d = (v - mean) * (v - mean); m2 += d; m4 += d * d }
        m2 /= Double(x.count)
        m4 /= Double(x.count)
        return (bands, Spectrum.rms(x), m4 / (m2 * m2))
    }

    @Test func spectrumLevelAndDropletsMatchTheFormerGenerator() {
        let frames = 48_000 * 12
        let current = Spectrum.render(RainSound(sampleRate: 48_000, seed: 11), frames: frames)
        let former = Spectrum.render(ReferenceRain(sampleRate: 48_000, seed: 11), frames: frames)
        for c in 0..<2 {
            let now = measure(current, channel: c), then = measure(former, channel: c)
            for (b, low) in Self.lows.enumerated() {
                #expect(abs(now.bands[b] - then.bands[b]) < 1.0,
                        "ch\(c) octave from \(low) Hz: \(now.bands[b]) dB vs \(then.bands[b]) dB before")
            }
            #expect(abs(now.rms / then.rms - 1) < 0.05, "ch\(c) rms \(now.rms) vs \(then.rms) before")
            // Droplets make the samples heavy-tailed; the bed alone is near 3 (Gaussian).
            #expect(abs(now.kurtosis / then.kurtosis - 1) < 0.15, "ch\(c) kurtosis \(now.kurtosis) vs \(then.kurtosis) before")
        }
    }

    @Test func requestSizesDoNotChangeTheSamples() {
        let whole = Spectrum.render(RainSound(sampleRate: 48_000, seed: 3), frames: 6_000)
        let source = RainSound(sampleRate: 48_000, seed: 3)
        var pieces: [Float] = []
        var left = 6_000, i = 0
        let sizes = [1, 3, 7, 1024, 2, 513, 4, 5, 600, 9]
        while left > 0 {
            let n = min(left, sizes[i % sizes.count])
            pieces += Spectrum.render(source, frames: n)
            left -= n
            i += 1
        }
        #expect(pieces == whole)
    }
}
