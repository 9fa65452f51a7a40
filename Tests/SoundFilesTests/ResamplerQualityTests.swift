// SPDX-License-Identifier: Apache-2.0
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import SoundFiles

/// The resampler's quality: a 0.5 sine at the input rate, fed in 2,048-frame
/// pieces, fitted at its frequency in the output; the residual (everything
/// that is not the tone: images folded into the band, aliasing, noise) must
/// stay below 16-bit output's floor, and the passband flat to 19 kHz. Fails
/// if the filter is made cheaper at the price of audible error (libsoxr
/// "quick" leaves its error only 31 dB below the tone).
@Suite struct ResamplerQualityTests {
    /// Gain (dB) of the tone and residual (dB re the tone) after resampling.
    static func measure(tone: Double, from inRate: Int, to outRate: Int, channels: Int = 1) throws -> (gain: Double, residual: Double) {
        let resampler = try StreamResampler(from: inRate, to: outRate, channels: channels, path: "test")
        let inFrames = 3 * inRate, piece = 2_048
        var output = [Float]()
        var input = [Float](repeating: 0, count: piece * channels)
        var out = [Float](repeating: 0, count: 4 * piece * channels)
        var fed = 0
        while fed < inFrames {
            for i in 0..<piece {
                let v = Float(0.5 * sin(2 * Double.pi * (tone * Double(fed + i) / Double(inRate)).truncatingRemainder(dividingBy: 1)))
                for c in 0..<channels { input[i * channels + c] = v }
            }
            var offset = 0
            while offset < piece {
                let r = input.withUnsafeBufferPointer { i in
                    out.withUnsafeMutableBufferPointer { o in
                        resampler.process(i.baseAddress! + offset * channels, inputFrames: piece - offset,
                                          into: o.baseAddress!, outputCapacity: 4 * piece)
                    }
                }
                output += out[0..<(r.produced * channels)]
                offset += r.consumed
                if r.consumed == 0 && r.produced == 0 { break }
            }
            fed += piece
        }
        // Fit one second from the middle of the first channel.
        let start = outRate, n = outRate
        var cs = 0.0, sn = 0.0
        for i in 0..<n {
            let w = 2 * Double.pi * (tone * Double(start + i) / Double(outRate)).truncatingRemainder(dividingBy: 1)
            let x = Double(output[(start + i) * channels])
            cs += x * cos(w)
            sn += x * sin(w)
        }
        cs *= 2 / Double(n)
        sn *= 2 / Double(n)
        let amplitude = (cs * cs + sn * sn).squareRoot()
        var residual = 0.0
        for i in 0..<n {
            let w = 2 * Double.pi * (tone * Double(start + i) / Double(outRate)).truncatingRemainder(dividingBy: 1)
            let d = Double(output[(start + i) * channels]) - cs * cos(w) - sn * sin(w)
            residual += d * d
        }
        residual = (2 * residual / Double(n)).squareRoot()
        return (20 * log10(amplitude / 0.5), 20 * log10(residual / amplitude))
    }

    /// Up to 16 kHz every image folds below 20 kHz, so all of it must be gone.
    @Test(arguments: [100.0, 1_000, 5_000, 10_000, 15_000])
    func fortyFourToFortyEightIsCleanAndFlat(tone: Double) throws {
        let (gain, residual) = try Self.measure(tone: tone, from: 44_100, to: 48_000)
        print("44.1 → 48 kHz, \(Int(tone)) Hz: gain \(gain) dB, residual \(residual) dB")
        #expect(abs(gain) < 0.05)
        #expect(residual < -90)
    }

    /// From 16 kHz the design lets the image through where it folds to 19.9 kHz
    /// or above (19 kHz → 22.9 kHz, about −14 dB): not audible, and the price
    /// of 32 taps. The passband stays flat; the residual is that image alone,
    /// growing towards the band's top (about −87 / −44 / −25 / −14 dB).
    @Test(arguments: [(16_000.0, -85.0), (17_000, -40), (18_000, -22), (19_000, -12)])
    func topOctaveIsFlatItsImageUltrasonic(tone: Double, limit: Double) throws {
        let (gain, residual) = try Self.measure(tone: tone, from: 44_100, to: 48_000)
        print("44.1 → 48 kHz, \(Int(tone)) Hz: gain \(gain) dB, residual (image at \(44_100 - tone) Hz, folded to \(3_900 + tone) Hz) \(residual) dB")
        #expect(abs(gain) < 0.05)
        #expect(residual < limit)
    }

    @Test func stereoChannelsAreFilteredAlike() throws {
        let (gain, residual) = try Self.measure(tone: 7_000, from: 44_100, to: 48_000, channels: 2)
        #expect(abs(gain) < 0.05)
        #expect(residual < -90)
    }

    @Test func ownFilterOnlyWhereItsDesignHolds() throws {
        #expect(try StreamResampler(from: 44_100, to: 48_000, channels: 1, path: "t").kind == "polyphase")
        #expect(PolyphaseResampler.make(from: 44_100, to: 48_000, channels: 2)!.attenuation > 94)
        // Downsampling, large steps, low input rates and odd rate pairs stay with libsoxr.
        for (from, to) in [(48_000, 44_100), (22_050, 48_000), (32_000, 48_000), (44_100, 96_000), (44_101, 48_000)] {
            #expect(try StreamResampler(from: from, to: to, channels: 1, path: "t").kind == "libsoxr")
        }
    }

    /// libsoxr (medium) keeps its quality for the pairs it still serves.
    @Test func libsoxrPairsStayClean() throws {
        let (gain, residual) = try Self.measure(tone: 10_000, from: 48_000, to: 44_100)
        #expect(abs(gain) < 0.05)
        #expect(residual < -90)
    }
}
