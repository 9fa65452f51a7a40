import CSndfile

/// One sound file opened with libsndfile for reading as stereo floats.
///
/// Opened on any thread, then used by one thread at a time (the main thread
/// while probing, the read-ahead thread while streaming). Never used on the
/// audio thread: every call may read the disk.
final class SoundFileReader {
    /// The file's path.
    let path: String
    /// Frames per second in the file.
    let sampleRate: Int
    /// 1 (mono, played on both sides) or 2.
    let channels: Int
    /// Frames in the file.
    let frames: Int
    /// libsndfile's name of the container and codec, e.g. `FLAC` or `WAV, PCM 16`.
    let formatName: String
    /// True for 16-bit PCM, read as shorts (`readStereo`'s fast path).
    let isPCM16: Bool
    private var file: OpaquePointer?
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchFrames = 0
    private var shorts: UnsafeMutablePointer<Int16>?
    private var shortsCapacity = 0

    /// Opens `path` (`sf_open`, read-only). Throws a `SoundFileError` for a file
    /// libsndfile can't open (empty, corrupt, unknown format), with more than two
    /// channels, or without audio frames.
    init(path: String) throws(SoundFileError) {
        self.path = path
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw SoundFileError(path: path, reason: "libsndfile cannot read it: \(String(cString: sf_strerror(nil)))")
        }
        guard info.channels == 1 || info.channels == 2 else {
            sf_close(file)
            throw SoundFileError(path: path, reason: "unsupported: \(info.channels) channels (mono or stereo only)")
        }
        guard info.samplerate >= 8_000 && info.samplerate <= 384_000 else {
            sf_close(file)
            throw SoundFileError(path: path, reason: "unsupported sample rate \(info.samplerate) Hz (8000…384000)")
        }
        guard info.frames >= 64 else {
            sf_close(file)
            throw SoundFileError(path: path, reason: info.frames <= 0 ? "no audio in it (0 frames)" : "too short (\(info.frames) frames)")
        }
        self.file = file
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int(info.frames)
        formatName = Self.formatName(info.format)
        isPCM16 = info.format & Int32(SF_FORMAT_SUBMASK) == Int32(SF_FORMAT_PCM_16)
    }

    deinit {
        if let file { sf_close(file) }
        scratch?.deallocate()
        shorts?.deallocate()
    }

    /// Closes the file (`sf_close`), freeing libsndfile's decoder state; later
    /// reads return 0 frames. For a loop that is now served from memory.
    func close() {
        if let file { sf_close(file) }
        file = nil
        shorts?.deallocate()
        shorts = nil
        shortsCapacity = 0
    }

    /// The file's title tag (`sf_get_string(SF_STR_TITLE)`), if it has one.
    var title: String? { tag(SF_STR_TITLE) }
    /// The file's comment tag (`SF_STR_COMMENT`), if it has one.
    var comment: String? { tag(SF_STR_COMMENT) }

    private func tag(_ kind: Int) -> String? {
        guard let file, let text = sf_get_string(file, Int32(kind)) else { return nil }
        let s = String(cString: text).trimmingSpaces
        return s.isEmpty ? nil : s
    }

    /// Moves the read position to `frame` (`sf_seek`). Throws when the file can't seek.
    func seek(to frame: Int) throws(SoundFileError) {
        guard let file, sf_seek(file, sf_count_t(frame), SEEK_SET) >= 0 else {
            throw SoundFileError(path: path, reason: "seek to frame \(frame) failed: \(lastError)")
        }
    }

    /// Reads up to `count` frames (`sf_readf_float`) as stereo interleaved
    /// floats into `out` (mono is copied to both sides). Returns the frames
    /// read: fewer than `count` at the end of the file or on a decoding error.
    func readStereo(into out: UnsafeMutablePointer<Float>, count: Int) -> Int {
        guard let file, count > 0 else { return 0 }
        if isPCM16 { return readPCM16Stereo(file, into: out, count: count) }
        if channels == 2 {
            return Int(sf_readf_float(file, out, sf_count_t(count)))
        }
        if scratchFrames < count {
            scratch?.deallocate()
            scratch = .allocate(capacity: count)
            scratchFrames = count
        }
        guard let scratch else { return 0 }
        let got = Int(sf_readf_float(file, scratch, sf_count_t(count)))
        for i in 0..<max(got, 0) {
            out[2 * i] = scratch[i]
            out[2 * i + 1] = scratch[i]
        }
        return max(got, 0)
    }

    /// Reads up to `count` frames in the file's own channels (`channels`
    /// floats per frame, interleaved) into `out`: the decoder's path, so a mono
    /// file is resampled as one channel and up-mixed only when copied out.
    /// Returns the frames read (fewer at the end or on a decoding error).
    func readNative(into out: UnsafeMutablePointer<Float>, count: Int) -> Int {
        guard let file, count > 0 else { return 0 }
        guard isPCM16 else { return max(Int(sf_readf_float(file, out, sf_count_t(count))), 0) }
        guard let (shorts, got) = readShorts(file, count: count) else { return 0 }
        let scale: Float = 1.0 / 32768
        for i in 0..<(channels * got) { out[i] = Float(shorts[i]) * scale }
        return got
    }

    /// Reads up to `count` frames of 16-bit samples into the reused `shorts`
    /// buffer (grown when needed); the buffer and the frames read.
    private func readShorts(_ file: OpaquePointer, count: Int) -> (UnsafeMutablePointer<Int16>, Int)? {
        let samples = channels * count
        if shortsCapacity < samples {
            shorts?.deallocate()
            shorts = .allocate(capacity: samples)
            shortsCapacity = samples
        }
        guard let shorts else { return nil }
        return (shorts, max(Int(sf_readf_short(file, shorts, sf_count_t(count))), 0))
    }

    /// `readStereo` for 16-bit PCM: `sf_readf_short` (a plain read, no
    /// per-sample work in libsndfile) and one vectorizable conversion loop.
    /// The floats are exactly `sf_readf_float`'s: sample · (1 / 32768).
    private func readPCM16Stereo(_ file: OpaquePointer, into out: UnsafeMutablePointer<Float>, count: Int) -> Int {
        guard let (shorts, got) = readShorts(file, count: count) else { return 0 }
        let scale: Float = 1.0 / 32768
        if channels == 2 {
            for i in 0..<(2 * got) { out[i] = Float(shorts[i]) * scale }
        } else {
            for i in 0..<got {
                let x = Float(shorts[i]) * scale
                out[2 * i] = x
                out[2 * i + 1] = x
            }
        }
        return got
    }

    /// libsndfile's text for the last error on this file (`sf_strerror`).
    var lastError: String { String(cString: sf_strerror(file)) }

    private static func formatName(_ format: Int32) -> String {
        var info = SF_FORMAT_INFO()
        info.format = format & Int32(SF_FORMAT_TYPEMASK)
        let container = withUnsafeMutablePointer(to: &info) { p -> String? in
            guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), p, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
                  let name = p.pointee.name else { return nil }
            return String(cString: name)
        }
        var sub = SF_FORMAT_INFO()
        sub.format = format & Int32(SF_FORMAT_SUBMASK)
        let codec = withUnsafeMutablePointer(to: &sub) { p -> String? in
            guard sf_command(nil, Int32(SFC_GET_FORMAT_INFO), p, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
                  let name = p.pointee.name else { return nil }
            return String(cString: name)
        }
        return [container, codec].compactMap { $0 }.joined(separator: ", ")
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
