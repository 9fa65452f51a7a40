// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience

/// Spectral shape, level and DC of the generated noises.
@Suite struct NoiseSpectrumTests {
    static let rate = 48_000.0
    static let size = 4096
    static let lows: [Double] = [125, 250, 500, 1000, 2000, 4000, 8000]

    func bandSlope(_ source: SoundSource, frames: Int = 1 << 17) -> (slope: Double, bands: [Double]) {
        let left = Spectrum.channel(Spectrum.render(source, frames: frames), 0)
        let psd = Spectrum.powerSpectrum(left, size: Self.size)
        let bands = Spectrum.octaveDensitiesDB(psd, size: Self.size, sampleRate: Self.rate, lows: Self.lows)
        return (Spectrum.slope(bands), bands)
    }

    @Test func whiteIsFlat() {
        let (slope, bands) = bandSlope(WhiteNoise())
        #expect(abs(slope) < 1.5, "white slope \(slope) dB/oct, bands \(bands)")
        let mean = bands.reduce(0, +) / Double(bands.count)
        for b in bands { #expect(abs(b - mean) < 1.5, "band \(b) vs mean \(mean)") }
    }

    @Test func pinkFallsThreeDBPerOctave() {
        let (slope, bands) = bandSlope(PinkNoise())
        #expect(abs(slope + 3) < 1.5, "pink slope \(slope) dB/oct, bands \(bands)")
    }

    @Test func brownFallsSixDBPerOctave() {
        let (slope, bands) = bandSlope(BrownNoise(sampleRate: 48_000))
        #expect(abs(slope + 6) < 1.5, "brown slope \(slope) dB/oct, bands \(bands)")
    }

    @Test(arguments: BuiltInSounds.all.map(\.id))
    func levelHeadroomAndNoDC(id: String) throws {
        let sound = try #require(BuiltInSounds.sound(id: id))
        let stereo = Spectrum.render(sound.makeSource(sampleRate: 48_000), frames: 48_000 * 10)
        let peak = Spectrum.peak(stereo)
        #expect(peak < 0.6, "\(id) peak \(peak): keep about 6 dB of headroom")
        #expect(peak > 0.05, "\(id) is nearly silent: peak \(peak)")
        for c in 0..<2 {
            let x = Spectrum.channel(stereo, c)
            let rms = Spectrum.rms(x)
            // All built-ins sit near −20 dBFS RMS so switching keeps the loudness.
            #expect(rms > 0.06 && rms < 0.13, "\(id) ch\(c) rms \(rms)")
            #expect(abs(Spectrum.mean(x)) < 0.05 * rms, "\(id) ch\(c) DC \(Spectrum.mean(x)) vs rms \(rms)")
        }
    }

    @Test(arguments: BuiltInSounds.all.map(\.id))
    func channelsAreDecorrelated(id: String) throws {
        let sound = try #require(BuiltInSounds.sound(id: id))
        let stereo = Spectrum.render(sound.makeSource(sampleRate: 48_000), frames: 48_000 * 2)
        let l = Spectrum.channel(stereo, 0), r = Spectrum.channel(stereo, 1)
        let ml = Spectrum.mean(l), mr = Spectrum.mean(r)
        var lr = 0.0, ll = 0.0, rr = 0.0
        for i in l.indices { lr += (l[i] - ml) * (r[i] - mr); ll += (l[i] - ml) * (l[i] - ml); rr += (r[i] - mr) * (r[i] - mr) }
        let correlation = lr / (ll * rr).squareRoot()
        #expect(abs(correlation) < 0.1, "\(id) L/R correlation \(correlation)")
    }

    @Test func catalogOrderAndSeedsAreReproducible() {
        #expect(BuiltInSounds.all.map(\.id) == ["white", "pink", "brown", "rain", "surf"])
        let a = Spectrum.render(PinkNoise(seed: 7), frames: 256)
        let b = Spectrum.render(PinkNoise(seed: 7), frames: 256)
        let c = Spectrum.render(PinkNoise(seed: 8), frames: 256)
        #expect(a == b)
        #expect(a != c)
    }
}
