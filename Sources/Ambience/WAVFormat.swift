// SPDX-License-Identifier: Apache-2.0
/// RIFF/WAVE helpers for offline rendering. Any thread.
public enum WAVFormat {
    /// The 44-byte canonical header of a PCM S16LE WAV file holding `frames`
    /// frames of `channels` channels at `sampleRate`. Sizes saturate at the
    /// 4 GiB limit of the format.
    public static func header(sampleRate: Int, channels: Int, frames: Int) -> [UInt8] {
        let bytesPerFrame = 2 * channels
        let dataBytes = UInt32(clamping: frames * bytesPerFrame)
        let riffSize = dataBytes > UInt32.max - 36 ? UInt32.max : dataBytes + 36
        var out: [UInt8] = []
        out.reserveCapacity(44)
        func ascii(_ s: String) { out.append(contentsOf: Array(s.utf8)) }
        func le32(_ v: UInt32) { for i in 0..<4 { out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) } }
        func le16(_ v: UInt16) { out.append(UInt8(truncatingIfNeeded: v)); out.append(UInt8(truncatingIfNeeded: v >> 8)) }
        ascii("RIFF"); le32(riffSize); ascii("WAVE")
        ascii("fmt "); le32(16)
        le16(1)  // PCM
        le16(UInt16(clamping: channels))
        le32(UInt32(clamping: sampleRate))
        le32(UInt32(clamping: sampleRate * bytesPerFrame))  // byte rate
        le16(UInt16(clamping: bytesPerFrame))  // block align
        le16(16)  // bits per sample
        ascii("data"); le32(dataBytes)
        return out
    }
}
