// SPDX-License-Identifier: Apache-2.0
import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// One sound file opened for reading as floats: FLAC with libFLAC directly
/// (`FLACDecoder`, recognised by its `fLaC` signature), everything else with
/// libsndfile.
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
    private let flac: FLACDecoder?
    private var scratch: UnsafeMutablePointer<Float>?
    private var scratchFrames = 0
    private var shorts: UnsafeMutablePointer<Int16>?
    private var shortsCapacity = 0

    /// Opens `path` (`sf_open`, read-only). Throws a `SoundFileError` for a file
    /// libsndfile can't open (empty, corrupt, unknown format), with more than two
    /// channels, or without audio frames.
    init(path: String) throws(SoundFileError) {
        self.path = path
        if Self.hasFLACSignature(path) {
            let flac = try FLACDecoder(path: path)
            try Self.check(path: path, channels: flac.channels, rate: flac.sampleRate, frames: flac.frames)
            self.flac = flac
            sampleRate = flac.sampleRate
            channels = flac.channels
            frames = flac.frames
            formatName = Self.formatName(Int32(SF_FORMAT_FLAC) | Self.pcmSubtype(bits: flac.bitsPerSample))
            isPCM16 = false
            return
        }
        flac = nil
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw SoundFileError(path: path, reason: "libsndfile cannot read it: \(String(cString: sf_strerror(nil)))")
        }
        do {
            try Self.check(path: path, channels: Int(info.channels), rate: Int(info.samplerate), frames: Int(info.frames))
        } catch {
            sf_close(file)
            throw error
        }
        self.file = file
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int(info.frames)
        formatName = Self.formatName(info.format)
        isPCM16 = info.format & Int32(SF_FORMAT_SUBMASK) == Int32(SF_FORMAT_PCM_16)
    }

    /// Mono or stereo, 8…384 kHz, at least 64 frames; else why not.
    private static func check(path: String, channels: Int, rate: Int, frames: Int) throws(SoundFileError) {
        guard channels == 1 || channels == 2 else {
            throw SoundFileError(path: path, reason: "unsupported: \(channels) channels (mono or stereo only)")
        }
        guard rate >= 8_000 && rate <= 384_000 else {
            throw SoundFileError(path: path, reason: "unsupported sample rate \(rate) Hz (8000…384000)")
        }
        guard frames >= 64 else {
            throw SoundFileError(path: path, reason: frames <= 0 ? "no audio in it (0 frames)" : "too short (\(frames) frames)")
        }
    }

    /// True when the file starts with FLAC's `fLaC` signature.
    private static func hasFLACSignature(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { _ = Glibc.close(fd) }
        var magic: UInt32 = 0
        return Glibc.read(fd, &magic, 4) == 4 && magic == UInt32(littleEndian: 0x4361_4c66)  // "fLaC"
    }

    /// libsndfile's PCM subtype for a bit depth (for the format's name).
    private static func pcmSubtype(bits: Int) -> Int32 {
        switch bits {
        case ...8: Int32(SF_FORMAT_PCM_S8)
        case 9...16: Int32(SF_FORMAT_PCM_16)
        case 17...24: Int32(SF_FORMAT_PCM_24)
        default: Int32(SF_FORMAT_PCM_32)
        }
    }

    deinit {
        if let file { sf_close(file) }
        scratch?.deallocate()
        shorts?.deallocate()
    }

    /// Closes the file (`sf_close`), freeing libsndfile's decoder state; later
    /// reads return 0 frames. For a loop that is now served from memory.
    func close() {
        flac?.close()
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
        if let flac { return kind == SF_STR_TITLE ? flac.title : flac.comment }
        guard let file, let text = sf_get_string(file, Int32(kind)) else { return nil }
        let s = String(cString: text).trimmingSpaces
        return s.isEmpty ? nil : s
    }

    /// Moves the read position to `frame` (`sf_seek`). Throws when the file can't seek.
    func seek(to frame: Int) throws(SoundFileError) {
        if let flac {
            guard flac.seek(to: frame) else { throw SoundFileError(path: path, reason: flac.lastError) }
            return
        }
        guard let file, sf_seek(file, sf_count_t(frame), SEEK_SET) >= 0 else {
            throw SoundFileError(path: path, reason: "seek to frame \(frame) failed: \(lastError)")
        }
    }

    /// Reads up to `count` frames (`sf_readf_float`) as stereo interleaved
    /// floats into `out` (mono is copied to both sides). Returns the frames
    /// read: fewer than `count` at the end of the file or on a decoding error.
    func readStereo(into out: UnsafeMutablePointer<Float>, count: Int) -> Int {
        if flac != nil, channels == 2 { return readNative(into: out, count: count) }
        if let flac, count > 0 {
            let got = flac.read(into: out, count: count)
            // Up-mix in place, from the end backwards.
            for i in stride(from: got - 1, through: 0, by: -1) {
                out[2 * i + 1] = out[i]
                out[2 * i] = out[i]
            }
            return got
        }
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
        if let flac { return count > 0 ? flac.read(into: out, count: count) : 0 }
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
    var lastError: String { flac?.lastError ?? String(cString: sf_strerror(file)) }

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
