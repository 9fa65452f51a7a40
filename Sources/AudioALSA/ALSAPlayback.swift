// SPDX-License-Identifier: Apache-2.0
import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// One open ALSA playback pcm: S16_LE, 2 channels, interleaved, blocking writes.
///
/// Opened on any thread, then used by exactly one thread (the audio thread once
/// `AudioEngine` has started). `write` allocates nothing in its steady state.
final class ALSAPlayback: PCMOutput, @unchecked Sendable {
    // @unchecked Sendable: handed from the opening thread to the audio thread
    // before that thread starts, then used only there.

    /// What the device actually accepted (may differ from what was asked).
    struct Negotiated: Sendable, Equatable {
        var sampleRate: Int
        var periodFrames: Int
        var bufferFrames: Int
    }

    let device: String
    let negotiated: Negotiated
    private var pcm: OpaquePointer?
    /// The local configuration the pcm was opened from, if any (freed on close).
    private var localConfiguration: OpaquePointer?
    /// The pcm's poll descriptors and the wake slot (`waitForRoom`).
    private var roomWait: DeviceWait?

    /// Opens `device` (any ALSA pcm name) for playback and configures it
    /// (`snd_pcm_open`, `snd_pcm_hw_params_*` with `_malloc`, `snd_pcm_sw_params_*`).
    /// With `configuration` (ALSA configuration text), `device` is looked up in
    /// that text alone instead of the system's configuration
    /// (`snd_pcm_open_lconf`): how tests build pcm chains no name reaches,
    /// such as a `rate` pcm over a file.
    init(device: String, configuration: String? = nil, sampleRate: Int, periodFrames: Int,
         bufferFrames: Int) throws(ALSAError) {
        self.device = device
        var handle: OpaquePointer?
        // Open non-blocking so a busy device fails with EBUSY instead of hanging
        // the caller, then switch to blocking writes (the device paces the thread).
        var rc: Int32
        var config: OpaquePointer?
        if let configuration {
            let top = try Self.loadConfiguration(configuration, device: device)
            rc = snd_pcm_open_lconf(&handle, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK), top)
            config = top
        } else {
            rc = snd_pcm_open(&handle, device, SND_PCM_STREAM_PLAYBACK, Int32(SND_PCM_NONBLOCK))
        }
        /// Undoes the open on a later failure.
        func abandon(_ handle: OpaquePointer?) {
            if let handle { snd_pcm_close(handle) }
            if let config { snd_config_delete(config) }
        }
        guard rc >= 0, let handle else {
            abandon(nil)
            throw ALSAError(device: device, function: "snd_pcm_open", code: rc)
        }
        rc = snd_pcm_nonblock(handle, 0)
        if rc < 0 {
            abandon(handle)
            throw ALSAError(device: device, function: "snd_pcm_nonblock", code: rc)
        }
        do {
            negotiated = try Self.configure(handle, device: device, sampleRate: sampleRate,
                                             periodFrames: periodFrames, bufferFrames: bufferFrames)
        } catch {
            abandon(handle)
            throw error
        }
        rc = snd_pcm_prepare(handle)
        if rc < 0 {
            abandon(handle)
            throw ALSAError(device: device, function: "snd_pcm_prepare", code: rc)
        }
        pcm = handle
        localConfiguration = config
        roomWait = DeviceWait(pcm: handle)
    }

    deinit { close() }

    /// Closes the pcm (`snd_pcm_close`); later calls do nothing.
    func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
        roomWait = nil
        if let localConfiguration { snd_config_delete(localConfiguration) }
        localConfiguration = nil
    }

    /// Parses ALSA configuration text into a new tree (`snd_config_load`).
    private static func loadConfiguration(_ text: String, device: String) throws(ALSAError) -> OpaquePointer {
        var top: OpaquePointer?
        var rc = snd_config_top(&top)
        guard rc >= 0, let top else { throw ALSAError(device: device, function: "snd_config_top", code: rc) }
        var input: OpaquePointer?
        rc = text.withCString { snd_input_buffer_open(&input, $0, -1) }
        if rc >= 0, let input {
            rc = snd_config_load(top, input)
            snd_input_close(input)
        }
        if rc < 0 {
            snd_config_delete(top)
            throw ALSAError(device: device, function: "snd_config_load", code: rc)
        }
        return top
    }

    private static func configure(_ pcm: OpaquePointer, device: String, sampleRate: Int,
                                  periodFrames: Int, bufferFrames: Int) throws(ALSAError) -> Negotiated {
        func check(_ rc: Int32, _ function: String) throws(ALSAError) {
            if rc < 0 { throw ALSAError(device: device, function: function, code: rc) }
        }
        var hw: OpaquePointer?
        try check(snd_pcm_hw_params_malloc(&hw), "snd_pcm_hw_params_malloc")
        defer { snd_pcm_hw_params_free(hw) }
        try check(snd_pcm_hw_params_any(pcm, hw), "snd_pcm_hw_params_any")
        try check(snd_pcm_hw_params_set_rate_resample(pcm, hw, 1), "snd_pcm_hw_params_set_rate_resample")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_set_access")
        try check(snd_pcm_hw_params_set_format(pcm, hw, SND_PCM_FORMAT_S16_LE), "snd_pcm_hw_params_set_format")
        try check(snd_pcm_hw_params_set_channels(pcm, hw, 2), "snd_pcm_hw_params_set_channels")
        var rate = UInt32(clamping: sampleRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, &dir), "snd_pcm_hw_params_set_rate_near")
        var buffer = snd_pcm_uframes_t(max(bufferFrames, 64))
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer), "snd_pcm_hw_params_set_buffer_size_near")
        var period = snd_pcm_uframes_t(max(periodFrames, 16))
        dir = 0
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir), "snd_pcm_hw_params_set_period_size_near")
        try check(snd_pcm_hw_params(pcm, hw), "snd_pcm_hw_params")
        try check(snd_pcm_hw_params_get_buffer_size(hw, &buffer), "snd_pcm_hw_params_get_buffer_size")
        dir = 0
        try check(snd_pcm_hw_params_get_period_size(hw, &period, &dir), "snd_pcm_hw_params_get_period_size")

        var sw: OpaquePointer?
        try check(snd_pcm_sw_params_malloc(&sw), "snd_pcm_sw_params_malloc")
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), "snd_pcm_sw_params_current")
        // Start once the buffer is full; wake the writer whenever a period is free.
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, buffer / period * period), "snd_pcm_sw_params_set_start_threshold")
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, period), "snd_pcm_sw_params_set_avail_min")
        try check(snd_pcm_sw_params(pcm, sw), "snd_pcm_sw_params")
        return Negotiated(sampleRate: Int(rate), periodFrames: Int(period), bufferFrames: Int(buffer))
    }

    /// Writes `frames` interleaved stereo S16 frames (`snd_pcm_writei`), blocking
    /// while the device buffer is full. Underruns and suspends are recovered
    /// with `snd_pcm_recover`; returns how many were recovered in this call.
    /// Anything `snd_pcm_recover` can't fix throws. Audio thread.
    @discardableResult
    func write(_ samples: UnsafePointer<Int16>, frames: Int) throws(ALSAError) -> Int {
        var underruns = 0
        guard let pcm else { throw ALSAError(device: device, function: "snd_pcm_writei", code: -EBADFD) }
        var done = 0
        while done < frames {
            let n = snd_pcm_writei(pcm, samples + 2 * done, snd_pcm_uframes_t(frames - done))
            if n >= 0 {
                done += n
                continue
            }
            let code = Int32(truncatingIfNeeded: n)
            if code == -EINTR || code == -EAGAIN { continue }
            let recovered = snd_pcm_recover(pcm, code, 1)
            if recovered < 0 { throw ALSAError(device: device, function: "snd_pcm_writei", code: code) }
            if code == -EPIPE || code == -ESTRPIPE { underruns += 1 }
        }
        return underruns
    }

    /// Frames queued in the device and not yet played (`snd_pcm_delay`);
    /// 0 for pcms without a clock (file/null). Audio thread.
    func delay() -> Int {
        guard let pcm else { return 0 }
        var frames: snd_pcm_sframes_t = 0
        return snd_pcm_delay(pcm, &frames) < 0 ? 0 : max(0, frames)
    }

    /// Waits until the device has room for a period or `wake` is readable
    /// (see `DeviceWait`); `.room` at once for a closed pcm or one without
    /// poll descriptors. Audio thread.
    func waitForRoom(wake: Int32, timeoutNanos: Int64) -> DeviceWait.Outcome {
        roomWait?.wait(wake: wake, timeoutNanos: timeoutNanos) ?? .room
    }

    /// Frames queued in the device that can still be taken back
    /// (`snd_pcm_rewindable`); a negative errno when the pcm can't tell (some
    /// plugins). `snd_pcm_avail` first: `snd_pcm_rewindable` answers from the
    /// hardware pointer as last read (at the last write: up to a period
    /// earlier after a wait for room), so the rewind would take back frames already played (and
    /// the renderer re-render a period too much). An error from
    /// `snd_pcm_avail` (an underrun) is left to the next write. Audio thread.
    func rewindable() -> Int {
        guard let pcm else { return Int(-EBADFD) }
        _ = snd_pcm_avail(pcm)
        return snd_pcm_rewindable(pcm)
    }

    /// Takes back the last `frames` queued frames (`snd_pcm_rewind`): the next
    /// write replaces them. Returns the frames taken back (possibly fewer), or
    /// a negative errno. Audio thread.
    func rewind(frames: Int) -> Int {
        guard let pcm else { return Int(-EBADFD) }
        return snd_pcm_rewind(pcm, snd_pcm_uframes_t(max(0, frames)))
    }

    /// Stops immediately, discarding queued frames (`snd_pcm_drop`). Audio thread.
    func drop() {
        if let pcm { snd_pcm_drop(pcm) }
    }

    /// Makes the pcm ready to start again after `drop` (`snd_pcm_prepare`).
    func prepare() throws(ALSAError) {
        guard let pcm else { return }
        let rc = snd_pcm_prepare(pcm)
        if rc < 0 { throw ALSAError(device: device, function: "snd_pcm_prepare", code: rc) }
    }
}
