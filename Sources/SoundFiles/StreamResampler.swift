// SPDX-License-Identifier: Apache-2.0
import CSoxr

/// A streaming float resampler from a file's rate to the output rate, in the
/// file's own channels (a mono file is resampled once, then up-mixed): the
/// project's own `PolyphaseResampler` for a small upsampling step from 40 kHz
/// or more (44.1 → 48 kHz: cheaper than libsoxr, 94 dB stopband), else libsoxr
/// at medium quality.
///
/// libsoxr's medium quality (`SOXR_MQ`: 16-bit precision, passband to about
/// 20 kHz at 44.1 → 48 kHz) is the cheapest setting with a full passband and
/// an error an S16 output does not show: quick (cubic) leaves its error only
/// 31 dB below a 10 kHz tone; low quality is −10 dB at 19 kHz; high quality
/// costs more for 20 bits an S16 output cannot carry.
///
/// Used by one thread at a time (whichever runs the `LoopingDecoder`); never
/// the audio thread. Its state carries across calls, so a looped stream fed
/// in pieces is resampled as one continuous signal.
final class StreamResampler {
    private let soxr: soxr_t?
    private let polyphase: PolyphaseResampler?
    /// Output frames per input frame.
    let ratio: Double

    /// Creates the resampler (`soxr_create`, one thread). Throws with libsoxr's message.
    init(from inputRate: Int, to outputRate: Int, channels: Int, path: String) throws(SoundFileError) {
        ratio = Double(outputRate) / Double(inputRate)
        if let own = PolyphaseResampler.make(from: inputRate, to: outputRate, channels: channels) {
            polyphase = own
            soxr = nil
            return
        }
        polyphase = nil
        var error: soxr_error_t?
        var io = csoxr_float_interleaved()
        var quality = csoxr_medium_quality()
        guard let handle = soxr_create(Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, nil),
              error == nil else {
            let text = error.map { String(cString: $0) } ?? "unknown error"
            throw SoundFileError(path: path, reason: "libsoxr cannot resample \(inputRate) Hz to \(outputRate) Hz: \(text)")
        }
        soxr = handle
    }

    deinit { if let soxr { soxr_delete(soxr) } }

    /// Which resampler runs: `polyphase` (our own) or `libsoxr`.
    var kind: String { polyphase == nil ? "libsoxr" : "polyphase" }

    /// Feeds `inputFrames` frames and writes up to `outputCapacity` resampled
    /// frames to `output` (`soxr_process`). Returns the frames consumed and
    /// produced; input not consumed must be offered again.
    func process(_ input: UnsafePointer<Float>, inputFrames: Int,
                 into output: UnsafeMutablePointer<Float>, outputCapacity: Int) -> (consumed: Int, produced: Int) {
        if let polyphase {
            return polyphase.process(input, inputFrames: inputFrames, into: output, outputCapacity: outputCapacity)
        }
        guard let soxr else { return (inputFrames, 0) }
        var used = 0
        var made = 0
        let error = soxr_process(soxr, input, inputFrames, &used, output, outputCapacity, &made)
        if error != nil { return (inputFrames, 0) }  // drop the input rather than spin on it
        return (used, made)
    }
}
