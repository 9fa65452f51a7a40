// SPDX-License-Identifier: Apache-2.0
/// White noise: flat spectrum, uniform amplitude, independent left and right.
///
/// Level: uniform amplitude A has RMS A/√3; A = 0.1·√3 ≈ 0.17 gives RMS 0.1
/// (−20 dBFS) and peaks of 0.17, matching the loudness of the other sounds.
public final class WhiteNoise: SoundSource, @unchecked Sendable {
    // @unchecked Sendable: the generator state is mutated only by `render`, which
    // runs on one thread at a time (the source is handed over through a queue).
    private var left: NoiseRandom
    private var right: NoiseRandom
    private let amplitude: Float = 0.1 * 1.7320508

    /// A new generator; `seed` makes the output reproducible.
    public init(seed: UInt64 = 0x5EED_0001) {
        left = NoiseRandom(seed: seed, stream: 1)
        right = NoiseRandom(seed: seed, stream: 2)
    }

    /// See `SoundSource.render`. Audio thread; real-time safe.
    public func render(into buffer: UnsafeMutablePointer<Float>, frames: Int) {
        // State in locals for the loop: stores through `buffer` might alias
        // `self`, so fields would be reloaded and stored back every sample.
        var l = left, r = right
        let a = amplitude
        for i in 0..<frames {
            buffer[2 * i] = l.nextBipolar() * a
            buffer[2 * i + 1] = r.nextBipolar() * a
        }
        left = l
        right = r
    }
}
