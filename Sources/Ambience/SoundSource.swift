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
}
