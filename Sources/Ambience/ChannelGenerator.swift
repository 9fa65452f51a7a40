// SPDX-License-Identifier: Apache-2.0
/// One channel of a generated sound: the next sample on each call. Value
/// types, owned by their `SoundSource`; real-time safe (no allocation).
protocol ChannelGenerator {
    mutating func next() -> Float
}

extension ChannelGenerator {
    /// Renders `frames` stereo frames from two independent channels into
    /// `buffer` (interleaved L, R). The channels are copied into locals for the
    /// loop and stored back after it: stores through `buffer` might alias the
    /// owning object, so its fields would otherwise be reloaded and stored
    /// every sample. Audio thread.
    @inline(__always)
    static func renderStereo(_ left: inout Self, _ right: inout Self,
                             into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        var l = left, r = right
        for i in 0..<frames {
            buffer[2 * i] = l.next()
            buffer[2 * i + 1] = r.next()
        }
        left = l
        right = r
    }
}
