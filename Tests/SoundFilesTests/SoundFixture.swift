// SPDX-License-Identifier: Apache-2.0
import CSndfile
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Writes real sound files with libsndfile for the tests, in a private
/// temporary directory that is removed at deinit.
final class SoundFixture {
    let directory: String

    init(name: String) {
        directory = "/tmp/soundfiles-\(getpid())-\(name)"
        _ = rmrf(directory)
        mkdir(directory, 0o755)
    }

    deinit { _ = rmrf(directory) }

    func path(_ name: String) -> String { "\(directory)/\(name)" }

    /// Writes `frames` frames made by `sample(frame, channel)` to `name` in
    /// `format` (e.g. `SF_FORMAT_WAV | SF_FORMAT_PCM_16`). Returns the path.
    @discardableResult
    func write(_ name: String, format: Int32, rate: Int, channels: Int, frames: Int,
               title: String? = nil, sample: (Int, Int) -> Float) -> String {
        let p = path(name)
        var info = SF_INFO()
        info.samplerate = Int32(rate)
        info.channels = Int32(channels)
        info.format = format
        guard let file = sf_open(p, Int32(SFM_WRITE), &info) else {
            fatalErrorInTest("sf_open(\(p)) for writing: \(String(cString: sf_strerror(nil)))")
            return p
        }
        if let title { sf_set_string(file, Int32(SF_STR_TITLE), title) }
        var block = [Float](repeating: 0, count: 4096 * channels)
        var done = 0
        while done < frames {
            let n = min(4096, frames - done)
            for i in 0..<n { for c in 0..<channels { block[i * channels + c] = sample(done + i, c) } }
            _ = block.withUnsafeBufferPointer { sf_writef_float(file, $0.baseAddress, sf_count_t(n)) }
            done += n
        }
        sf_close(file)
        return p
    }

    /// Writes raw bytes to `name` (the test then fails to read it if the write failed).
    /// `FILE*` is unwrapped: glibc 2.41 (trixie) declares fwrite/fclose's stream non-null.
    @discardableResult
    func writeBytes(_ name: String, _ bytes: [UInt8]) -> String {
        let p = path(name)
        guard let f = fopen(p, "wb") else {
            Issue.record("fopen \(p): \(String(cString: strerror(errno)))")
            return p
        }
        _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, f) }
        fclose(f)
        return p
    }

    private func rmrf(_ dir: String) -> Int32 {
        guard let d = opendir(dir) else { return -1 }
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { unlink("\(dir)/\(name)") }
        }
        closedir(d)
        return rmdir(dir)
    }
}

/// Records a fixture failure without crashing the test process.
func fatalErrorInTest(_ message: String) {
    Issue.record(Comment(rawValue: "fixture: \(message)"))
}

/// A reproducible white-noise sample in [-amplitude, amplitude] (xorshift on frame and channel).
func noise(_ frame: Int, _ channel: Int, seed: UInt64 = 1, amplitude: Float = 0.3) -> Float {
    var x = UInt64(frame &* 2 &+ channel) &* 0x9E3779B97F4A7C15 ^ seed &* 0xD1B54A32D192ED03
    x ^= x >> 31; x &*= 0xBF58476D1CE4E5B9; x ^= x >> 29
    return (Float(x >> 40) / Float(1 << 24) * 2 - 1) * amplitude
}

/// Renders `frames` frames of `source` (stereo floats).
func renderSource(_ render: (UnsafeMutablePointer<Float>, Int) -> Void, frames: Int, chunk: Int = 1024) -> [Float] {
    var out = [Float](repeating: 0, count: 2 * frames)
    out.withUnsafeMutableBufferPointer { buf in
        var done = 0
        while done < frames {
            let n = min(chunk, frames - done)
            render(buf.baseAddress! + 2 * done, n)
            done += n
        }
    }
    return out
}

/// One channel of interleaved stereo.
func channel(_ stereo: [Float], _ c: Int) -> [Float] {
    stride(from: c, to: stereo.count, by: 2).map { stereo[$0] }
}

/// Largest |x[i+1] − x[i]|.
func maxJump(_ x: [Float]) -> Float {
    var m: Float = 0
    for i in 1..<x.count { m = max(m, abs(x[i] - x[i - 1])) }
    return m
}

/// RMS of x[from..<to].
func rms(_ x: [Float], _ from: Int, _ to: Int) -> Float {
    var s: Float = 0
    for i in from..<to { s += x[i] * x[i] }
    return (s / Float(max(1, to - from))).squareRoot()
}
