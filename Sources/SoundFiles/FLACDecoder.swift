// SPDX-License-Identifier: Apache-2.0
import CFLAC

/// A FLAC file decoded with libFLAC's stream decoder directly, to floats in
/// the file's own channels: one conversion per sample (integer → float while
/// libFLAC hands over each block), where libsndfile's FLAC path adds a copy
/// and a per-sample conversion of its own.
///
/// Untrusted input: a file whose stream info can't be read, or with an
/// unknown length, fails in `init` with libFLAC's reason; a damaged frame
/// (lost sync, bad header, CRC mismatch) counts in `decodeErrors` and ends
/// the current read short, as libsndfile's reads do. Used by one thread at a
/// time, like `SoundFileReader`, which owns it.
final class FLACDecoder {
    private(set) var sampleRate = 0
    private(set) var channels = 0
    private(set) var frames = 0
    private(set) var bitsPerSample = 0
    /// The Vorbis comment's TITLE and COMMENT (or DESCRIPTION), if present.
    private(set) var title: String?
    private(set) var comment: String?
    /// Damaged-stream reports from libFLAC so far.
    private(set) var decodeErrors = 0
    /// The last problem, for error messages.
    private(set) var lastError = "no error"

    private var decoder: UnsafeMutablePointer<FLAC__StreamDecoder>?
    /// Metadata seen by the callback while opening.
    private var info: (rate: Int, channels: Int, frames: Int, bits: Int)?
    /// Decoded, converted frames not yet read (interleaved floats).
    private var pending: UnsafeMutablePointer<Float>
    private var pendingCapacity: Int
    private var pendingStart = 0, pendingEnd = 0
    /// Set by the error callback while a block is decoded.
    private var blockFailed = false

    init(path: String) throws(SoundFileError) {
        pendingCapacity = 4_608 * 2
        pending = .allocate(capacity: pendingCapacity)
        guard let decoder = FLAC__stream_decoder_new() else {
            throw SoundFileError(path: path, reason: "libFLAC cannot allocate a decoder")
        }
        self.decoder = decoder
        // Every libFLAC call from here on is made inside `open`, a method of
        // self (so self lives through it), and `close` ends the failure
        // path: an optimised build may end an object's lifetime at its last
        // use, and a call through the pointer after that would reach a
        // decoder `deinit` had freed.
        if let problem = open(decoder, path: path) {
            close()
            throw SoundFileError(path: path, reason: problem)
        }
    }

    /// Opens `path` with `decoder` (self's own) and reads its metadata: nil
    /// when it can be decoded, else why not.
    private func open(_ decoder: UnsafeMutablePointer<FLAC__StreamDecoder>, path: String) -> String? {
        FLAC__stream_decoder_set_metadata_respond(decoder, FLAC__METADATA_TYPE_VORBIS_COMMENT)
        let me = Unmanaged.passUnretained(self).toOpaque()
        let status = FLAC__stream_decoder_init_file(decoder, path, { _, frame, buffer, client in
            guard let frame, let buffer, let client else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
            return Unmanaged<FLACDecoder>.fromOpaque(client).takeUnretainedValue().accept(frame, buffer)
        }, { _, metadata, client in
            guard let metadata, let client else { return }
            Unmanaged<FLACDecoder>.fromOpaque(client).takeUnretainedValue().note(metadata)
        }, { _, status, client in
            guard let client else { return }
            Unmanaged<FLACDecoder>.fromOpaque(client).takeUnretainedValue().fail(status)
        }, me)
        guard status == FLAC__STREAM_DECODER_INIT_STATUS_OK else {
            return "libFLAC cannot open it (init status \(status.rawValue))"
        }
        guard FLAC__stream_decoder_process_until_end_of_metadata(decoder) != 0 else {
            return "libFLAC cannot read it: \(String(cString: FLAC__stream_decoder_get_resolved_state_string(decoder)))"
        }
        guard let info else { return "libFLAC cannot read it: no stream info (\(lastError))" }
        (sampleRate, channels, frames, bitsPerSample) = info
        if frames <= 0 { return "no audio in it (0 frames or an unknown length)" }
        if bitsPerSample < 4 || bitsPerSample > 32 { return "unsupported: \(bitsPerSample) bits per sample" }
        return nil
    }

    deinit {
        if let decoder { FLAC__stream_decoder_delete(decoder) }
        pending.deallocate()
    }

    /// Frees libFLAC's decoder; later reads return 0 frames.
    func close() {
        if let decoder { FLAC__stream_decoder_delete(decoder) }
        decoder = nil
        pendingStart = 0
        pendingEnd = 0
    }

    /// Reads up to `count` frames (floats in ±1, `channels` per frame,
    /// interleaved) into `out`. Fewer at the end of the stream or when a
    /// block was damaged (the next read goes on after it).
    func read(into out: UnsafeMutablePointer<Float>, count: Int) -> Int {
        var done = 0
        while done < count {
            if pendingStart == pendingEnd {
                guard let decoder, !blockFailed else { break }
                if FLAC__stream_decoder_get_state(decoder) == FLAC__STREAM_DECODER_END_OF_STREAM { break }
                if FLAC__stream_decoder_process_single(decoder) == 0 {
                    lastError = String(cString: FLAC__stream_decoder_get_resolved_state_string(decoder))
                    break
                }
                continue
            }
            let n = min(count - done, (pendingEnd - pendingStart) / channels)
            (out + done * channels).update(from: pending + pendingStart, count: n * channels)
            pendingStart += n * channels
            done += n
        }
        blockFailed = false
        return done
    }

    /// Moves to `frame` (`FLAC__stream_decoder_seek_absolute`); false when
    /// libFLAC can't (the decoder is then flushed, ready for another seek).
    func seek(to frame: Int) -> Bool {
        guard let decoder, frame >= 0, frame < frames else { return false }
        pendingStart = 0
        pendingEnd = 0
        blockFailed = false
        if FLAC__stream_decoder_seek_absolute(decoder, UInt64(frame)) != 0 { return true }
        let state = String(cString: FLAC__stream_decoder_get_resolved_state_string(decoder))
        lastError = "seek to frame \(frame) of \(frames) failed: truncated or damaged (\(state))"
        if FLAC__stream_decoder_get_state(decoder) == FLAC__STREAM_DECODER_SEEK_ERROR { FLAC__stream_decoder_flush(decoder) }
        pendingStart = 0
        pendingEnd = 0
        return false
    }

    /// The write callback: one block, converted to interleaved floats.
    private func accept(_ frame: UnsafePointer<FLAC__Frame>,
                        _ buffer: UnsafePointer<UnsafePointer<FLAC__int32>?>) -> FLAC__StreamDecoderWriteStatus {
        let header = frame.pointee.header
        let n = Int(header.blocksize)
        guard Int(header.channels) == channels, Int(header.bits_per_sample) == bitsPerSample else {
            lastError = "a block changes the stream's format"
            blockFailed = true
            return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT
        }
        if pendingCapacity < n * channels {
            pending.deallocate()
            pendingCapacity = n * channels
            pending = .allocate(capacity: pendingCapacity)
        }
        let scale = 1 / Float(1 << (bitsPerSample - 1))
        if channels == 1 {
            guard let mono = buffer[0] else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
            for i in 0..<n { pending[i] = Float(mono[i]) * scale }
        } else {
            guard let left = buffer[0], let right = buffer[1] else { return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT }
            for i in 0..<n {
                pending[2 * i] = Float(left[i]) * scale
                pending[2 * i + 1] = Float(right[i]) * scale
            }
        }
        pendingStart = 0
        pendingEnd = n * channels
        return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
    }

    /// The metadata callback: stream info and the Vorbis comment.
    private func note(_ metadata: UnsafePointer<FLAC__StreamMetadata>) {
        if metadata.pointee.type == FLAC__METADATA_TYPE_STREAMINFO {
            let s = metadata.pointee.data.stream_info
            info = (Int(s.sample_rate), Int(s.channels), Int(clamping: s.total_samples), Int(s.bits_per_sample))
        } else if metadata.pointee.type == FLAC__METADATA_TYPE_VORBIS_COMMENT {
            let v = metadata.pointee.data.vorbis_comment
            guard let comments = v.comments else { return }
            for k in 0..<Int(v.num_comments) {
                let e = comments[k]
                guard let bytes = e.entry else { continue }
                let text = String(decoding: UnsafeBufferPointer(start: bytes, count: Int(e.length)), as: UTF8.self)
                guard let eq = text.firstIndex(of: "=") else { continue }
                let key = text[..<eq].uppercased(), value = String(text[text.index(after: eq)...]).trimmingSpaces
                guard !value.isEmpty else { continue }
                if key == "TITLE" && title == nil { title = value }
                if key == "COMMENT" || (key == "DESCRIPTION" && comment == nil) { comment = value }
            }
        }
    }

    /// The error callback: a damaged stream.
    private func fail(_ status: FLAC__StreamDecoderErrorStatus) {
        decodeErrors += 1
        blockFailed = true
        switch status {
        case FLAC__STREAM_DECODER_ERROR_STATUS_LOST_SYNC: lastError = "libFLAC lost sync (damaged data)"
        case FLAC__STREAM_DECODER_ERROR_STATUS_BAD_HEADER: lastError = "libFLAC found a bad frame header"
        case FLAC__STREAM_DECODER_ERROR_STATUS_FRAME_CRC_MISMATCH: lastError = "libFLAC found a frame CRC mismatch"
        default: lastError = "libFLAC decoding error \(status.rawValue)"
        }
    }
}
