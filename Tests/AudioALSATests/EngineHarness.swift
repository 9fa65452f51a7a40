// SPDX-License-Identifier: Apache-2.0
import AudioALSA
import Ambience
import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// Runs an AudioEngine against a real alsa-lib file pcm (`file:'PATH',raw`) and
/// waits on its reportFD (poll with a deadline) instead of sleeping.
final class EngineHarness {
    static let rate = 48_000
    let path: String
    let engine: AudioEngine
    let logs = MemoryLogBackend()
    private(set) var reports: [AudioEngine.Report] = []

    init(name: String, directory: String = "/tmp", periodFrames: Int = 1024, bufferFrames: Int = 4096) {
        path = "\(directory)/ambience-\(getpid())-\(name).raw"
        unlink(path)
        let settings = AudioEngine.Settings(device: "file:'\(path)',raw", sampleRate: Self.rate,
                                            periodFrames: periodFrames, bufferFrames: bufferFrames, rewindMarginFrames: 256)
        engine = AudioEngine(settings: settings, logger: Logger(component: "audio", threshold: .debug, backend: logs))
    }

    deinit {
        engine.shutdown(fadeMs: 0)
        unlink(path)
    }

    /// Polls reportFD until `condition` holds or `seconds` pass; collects reports.
    @discardableResult
    func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Self.now() + seconds
        while !condition() {
            let left = deadline - Self.now()
            if left <= 0 { return false }
            var pfd = pollfd(fd: engine.reportFD, events: Int16(POLLIN), revents: 0)
            _ = poll(&pfd, 1, Int32(min(left, 0.02) * 1000) + 1)
            reports += engine.drainReports()
        }
        return true
    }

    /// Waits for a report matching `match`.
    func waitFor(seconds: Double = 3, _ match: @escaping (AudioEngine.Report) -> Bool) -> Bool {
        wait(seconds: seconds) { reports.contains(where: match) }
    }

    /// Waits until the file holds at least `frames` stereo S16 frames.
    func waitForFrames(_ frames: Int, seconds: Double = 5) -> Bool {
        wait(seconds: seconds) { fileFrames() >= frames }
    }

    /// Stereo frames currently in the file.
    func fileFrames() -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) / 4 : 0
    }

    /// The file's samples (interleaved L, R).
    func samples() -> [Int16] {
        guard let f = fopen(path, "rb") else { return [] }
        defer { fclose(f) }
        var out = [Int16](repeating: 0, count: fileFrames() * 2)
        let n = out.withUnsafeMutableBytes { fread($0.baseAddress, 2, $0.count / 2, f) }
        return Array(out.prefix(n))
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// RMS of one channel over frames [from, to).
    static func rms(_ s: [Int16], channel: Int, from: Int, to: Int) -> Double {
        var sum = 0.0
        for f in from..<to { let v = Double(s[2 * f + channel]); sum += v * v }
        return (sum / Double(max(to - from, 1))).squareRoot()
    }
}

extension AudioEngine.Report {
    var playingTicket: UInt64? { if case .playing(let t) = self { return t } else { return nil } }
    var pausedTicket: UInt64? { if case .paused(let t) = self { return t } else { return nil } }
    var longFadeTicket: UInt64? { if case .longFadeDone(let t) = self { return t } else { return nil } }
    var isDeviceUnavailable: Bool { if case .deviceUnavailable = self { return true } else { return false } }
    var isDeviceAvailable: Bool { if case .deviceAvailable = self { return true } else { return false } }
    var retiredSource: SoundSource? { if case .retired(let s) = self { return s } else { return nil } }
}
