// SPDX-License-Identifier: Apache-2.0
/// A producer of stereo audio, pulled by the audio thread.
///
/// Sources are created on the main thread and then handed to the audio thread
/// through a queue; from then on only the audio thread calls `render`. When the
/// audio thread is done with a source it hands it back (never releasing the last
/// reference itself), so deinitialisation happens off the audio thread.
public protocol SoundSource: AnyObject, Sendable {
    /// Writes `frames` stereo interleaved frames (L, R, L, R, …) of floats in
    /// about [-1, 1] to `buffer` (which holds at least `2 * frames` floats).
    ///
    /// Real-time safe: implementations must not allocate, lock, log or do I/O.
    /// Called on one thread at a time (the audio thread once handed over).
    func render(into buffer: UnsafeMutablePointer<Float>, frames: Int)

    /// This source where it can add itself into a mix (`MixableSource`),
    /// else nil (the default). A requirement rather than an `as?` cast: the
    /// runtime's first conformance lookup of a type costs ~0.3 M
    /// instructions, on the thread that builds the mix.
    var mixable: MixableSource? { get }
}

extension SoundSource {
    public var mixable: MixableSource? { nil }
}

extension MixableSource {
    public var mixable: MixableSource? { self }
}

/// A source that can also add itself, scaled, into a buffer: what a mix does
/// with each layer at a steady level, done in the source's own last pass
/// instead of a pass of the mix's over a scratch copy.
public protocol MixableSource: SoundSource {
    /// Adds `gain` × the next `frames` frames (the samples `render` would
    /// have written, bit for bit) to `buffer`: `buffer[i] += sample[i] * gain`.
    /// The same stream as `render`: the two may be mixed freely.
    func render(adding buffer: UnsafeMutablePointer<Float>, frames: Int, gain: Float)
}
