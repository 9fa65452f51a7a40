// SPDX-License-Identifier: Apache-2.0
import Ambience
#if canImport(Glibc)
import Glibc
#endif

/// Test-only signal analysis: Welch power spectrum and simple statistics.
enum Spectrum {
    /// Renders `frames` stereo frames of `source` directly (no renderer).
    static func render(_ source: SoundSource, frames: Int) -> [Float] {
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { source.render(into: $0.baseAddress!, frames: frames) }
        return out
    }

    /// One channel (0 = left, 1 = right) of an interleaved stereo buffer.
    static func channel(_ stereo: [Float], _ c: Int) -> [Double] {
        stride(from: c, to: stereo.count, by: 2).map { Double(stereo[$0]) }
    }

    /// In-place iterative radix-2 FFT; `re.count` must be a power of two.
    static func fft(_ re: inout [Double], _ im: inout [Double]) {
        let n = re.count
        var j = 0
        for i in 1..<n {
            var bit = n >> 1
            while j & bit != 0 { j ^= bit; bit >>= 1 }
            j |= bit
            if i < j { re.swapAt(i, j); im.swapAt(i, j) }
        }
        var len = 2
        while len <= n {
            let angle = -2 * Double.pi / Double(len)
            for start in stride(from: 0, to: n, by: len) {
                for k in 0..<(len / 2) {
                    let wr = cos(angle * Double(k)), wi = sin(angle * Double(k))
                    let a = start + k, b = a + len / 2
                    let tr = re[b] * wr - im[b] * wi
                    let ti = re[b] * wi + im[b] * wr
                    re[b] = re[a] - tr; im[b] = im[a] - ti
                    re[a] += tr; im[a] += ti
                }
            }
            len <<= 1
        }
    }

    /// Welch PSD (Hann window, 50 % overlap) with `size`-point segments.
    static func powerSpectrum(_ x: [Double], size: Int) -> [Double] {
        var psd = [Double](repeating: 0, count: size / 2)
        let window = (0..<size).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size)) }
        var segments = 0
        var start = 0
        while start + size <= x.count {
            var re = (0..<size).map { x[start + $0] * window[$0] }
            var im = [Double](repeating: 0, count: size)
            fft(&re, &im)
            for k in 0..<(size / 2) { psd[k] += re[k] * re[k] + im[k] * im[k] }
            segments += 1
            start += size / 2
        }
        return psd.map { $0 / Double(max(segments, 1)) }
    }

    /// Mean PSD density (dB) in octave bands starting at each of `lows` Hz.
    static func octaveDensitiesDB(_ psd: [Double], size: Int, sampleRate: Double, lows: [Double]) -> [Double] {
        lows.map { low in
            let k0 = Int((low * Double(size) / sampleRate).rounded())
            let k1 = Int((2 * low * Double(size) / sampleRate).rounded())
            let band = psd[k0..<k1]
            return 10 * log10(band.reduce(0, +) / Double(band.count))
        }
    }

    /// Least-squares slope of `values` against their index (dB per octave here).
    static func slope(_ values: [Double]) -> Double {
        let n = Double(values.count)
        let xs = values.indices.map(Double.init)
        let mx = xs.reduce(0, +) / n, my = values.reduce(0, +) / n
        var num = 0.0, den = 0.0
        for (x, y) in zip(xs, values) { num += (x - mx) * (y - my); den += (x - mx) * (x - mx) }
        return num / den
    }

    static func mean(_ x: [Double]) -> Double { x.reduce(0, +) / Double(x.count) }
    static func rms(_ x: [Double]) -> Double { (x.reduce(0) { $0 + $1 * $1 } / Double(x.count)).squareRoot() }
    static func peak(_ x: [Float]) -> Float { x.reduce(0) { max($0, $1.magnitude) } }
    /// Largest absolute difference between consecutive samples of one channel.
    static func maxJump(_ x: [Double]) -> Double {
        var m = 0.0
        for i in 1..<x.count { m = max(m, abs(x[i] - x[i - 1])) }
        return m
    }
}
