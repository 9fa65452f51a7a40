// SPDX-License-Identifier: Apache-2.0
/// The pcm the audio thread renders into: in the speaker always an
/// `ALSAPlayback` (alsa-lib). A port for one reason: the rewind fallback must
/// be testable. The pcms alsa-lib offers without a sound card have no clock
/// (`snd_pcm_delay` is 0 for `file`/`null`), so none of them can show a device
/// that holds a full buffer and refuses to take it back; the tests put
/// alsa-lib's own `rate` pcm (which always refuses) behind a device clock they
/// advance by hand (`Tests/AudioALSATests/ManualClockPCM.swift`).
///
/// Opened on any thread, then used only by the audio thread. The calls mean
/// exactly what `ALSAPlayback`'s do.
protocol PCMOutput: AnyObject, Sendable {
    /// What the device accepted (rate, period, buffer).
    var negotiated: ALSAPlayback.Negotiated { get }
    /// Writes `frames` interleaved stereo S16 frames, blocking while the device
    /// is full; returns the underruns recovered on the way.
    @discardableResult
    func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(ALSAError) -> Int
    /// Waits until the device has room for a period or `wake` (the request
    /// eventfd) is readable, at most `timeoutNanos`; a pcm that can't be
    /// polled answers `.room` at once (its `write` then blocks).
    func waitForRoom(wake: Int32, timeoutNanos: Int64) -> DeviceWait.Outcome
    /// Frames queued and not yet played (0 for a pcm without a clock).
    func delay() -> Int
    /// Frames that can still be taken back, or a negative errno.
    func rewindable() -> Int
    /// Takes back up to `frames` queued frames; the count taken or a negative errno.
    func rewind(frames: Int) -> Int
    /// Stops at once, discarding what is queued.
    func drop()
    /// Makes the pcm ready to start again after `drop`.
    func prepare() throws(ALSAError)
    /// Closes the pcm; later calls do nothing.
    func close()
}

extension AudioEngine {
    /// Opens the device named by the settings (the engine calls it at start
    /// and on every reopen after a failure). Any thread.
    typealias DeviceOpener = @Sendable (Settings) throws(ALSAError) -> any PCMOutput

    /// The speaker's opener: alsa-lib's pcm by name.
    static let openALSA: DeviceOpener = { settings throws(ALSAError) in
        try ALSAPlayback(device: settings.device, sampleRate: settings.sampleRate,
                         periodFrames: settings.periodFrames, bufferFrames: settings.bufferFrames)
    }
}
