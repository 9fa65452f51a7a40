// SPDX-License-Identifier: Apache-2.0
import Testing
import Ambience

/// The surf texture: waves that swell and recede slowly, brighter at the
/// crest, without level jumps or pops. Level, DC, peak and L/R decorrelation
/// are checked for every built-in in `NoiseSpectrumTests`.
@Suite struct SurfTests {
    static let rate = 48_000

    /// RMS of consecutive `window`-frame windows of one channel.
    static func windowRMS(_ x: [Double], window: Int) -> [Double] {
        stride(from: 0, to: x.count - window + 1, by: window).map { Spectrum.rms(Array(x[$0..<($0 + window)])) }
    }

    @Test func wavesSwellAndRecedeSmoothly() {
        let left = Spectrum.channel(Spectrum.render(SurfSound(sampleRate: Self.rate), frames: Self.rate * 40), 0)
        let levels = Self.windowRMS(left, window: Self.rate / 4)
        let loudest = levels.max() ?? 0, quietest = levels.min() ?? 0
        // Waves every 6–13 s: in 40 s the level swings by well over 6 dB …
        #expect(loudest > 2 * quietest, "level range \(quietest)…\(loudest)")
        // … but slowly: neighbouring quarter-seconds never differ by more than ~2.5 dB.
        for i in 1..<levels.count {
            let ratio = levels[i] / levels[i - 1]
            #expect(ratio < 1.35 && ratio > 1 / 1.35, "level step \(ratio) at window \(i)")
            if !(ratio < 1.35 && ratio > 1 / 1.35) { break }
        }
    }

    @Test func crestsAreBrighterThanTroughs() {
        // Brightness as the RMS of the first difference relative to the RMS:
        // the low-pass opens as a wave builds.
        let left = Spectrum.channel(Spectrum.render(SurfSound(sampleRate: Self.rate, seed: 3), frames: Self.rate * 40), 0)
        let window = Self.rate / 4
        var windows: [(level: Double, brightness: Double)] = []
        for start in stride(from: 0, to: left.count - window, by: window) {
            let x = Array(left[start..<(start + window)])
            let diff = (1..<x.count).map { x[$0] - x[$0 - 1] }
            windows.append((Spectrum.rms(x), Spectrum.rms(diff) / Spectrum.rms(x)))
        }
        let sorted = windows.sorted { $0.level < $1.level }
        let tenth = max(sorted.count / 10, 1)
        let quiet = sorted.prefix(tenth).map(\.brightness).reduce(0, +) / Double(tenth)
        let loud = sorted.suffix(tenth).map(\.brightness).reduce(0, +) / Double(tenth)
        #expect(loud > 1.5 * quiet, "brightness at crests \(loud) vs troughs \(quiet)")
    }

    @Test func noPopsInTheMaterialOrWhenSwitching() {
        // The material's own largest jump, and a crossfade to and from pink
        // through the renderer staying within it.
        let surfJump = Spectrum.maxJump(Spectrum.channel(Spectrum.render(SurfSound(sampleRate: Self.rate, seed: 5), frames: Self.rate * 20), 0))
        let pinkJump = Spectrum.maxJump(Spectrum.channel(Spectrum.render(PinkNoise(seed: 6), frames: Self.rate * 2), 0))
        #expect(surfJump < 0.3, "surf jumps by \(surfJump) between samples")
        let r = AmbienceRenderer(sampleRate: Self.rate, maxFrames: 1024)
        r.play(PinkNoise(seed: 6), fadeFrames: 4800)
        let (start, _) = r.floats(24_000)
        r.crossfade(to: SurfSound(sampleRate: Self.rate, seed: 5), frames: 24_000)
        let (during, _) = r.floats(72_000)
        r.crossfade(to: PinkNoise(seed: 7), frames: 24_000)
        let (back, _) = r.floats(48_000)
        r.pause(fadeFrames: 9600)
        let (stop, _) = r.floats(12_000)
        let left = Spectrum.channel(start + during + back + stop, 0)
        let material = max(surfJump, pinkJump)
        #expect(Spectrum.maxJump(left) <= material * 1.1, "jump \(Spectrum.maxJump(left)) vs material \(material)")
        #expect(abs(left[0]) < 0.01 && left.last == 0, "starts and ends in silence")
        while r.takeRetired() != nil {}
    }

    @Test func seedsAreReproducible() {
        let a = Spectrum.render(SurfSound(sampleRate: Self.rate, seed: 7), frames: 4096)
        let b = Spectrum.render(SurfSound(sampleRate: Self.rate, seed: 7), frames: 4096)
        let c = Spectrum.render(SurfSound(sampleRate: Self.rate, seed: 8), frames: 4096)
        #expect(a == b)
        #expect(a != c)
    }
}
