// SPDX-License-Identifier: Apache-2.0
import CALSA
import Ambience
import SpeakerSystem
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The body of the audio thread: applies requests to the renderer, renders a
/// period at a time, writes it to the pcm, paces file pcms, parks when paused
/// and reopens a failed device with backoff.
///
/// Steady state (playing, device healthy) allocates nothing, takes no lock and
/// never logs: it talks to the main thread only through the two SPSC queues
/// and eventfds. Failure paths (building a `deviceUnavailable` reason string,
/// reopening the pcm) do allocate; they are not steady state.
final class AudioThreadWorker: @unchecked Sendable {
    // @unchecked Sendable: created on the main thread and handed to the audio
    // thread as it starts; after that the main thread touches only `stop`
    // (atomics) and its own ends of the queues in `links`.
    typealias Request = AudioEngine.Request
    typealias Report = AudioEngine.Report

    /// Set by the main thread to stop the thread (any thread).
    let stop = AudioThreadStop()
    /// What the thread was started with (the negotiated rate, period and buffer).
    private let settings: AudioEngine.Settings
    /// The queues and eventfds to and from the main thread.
    private let links: AudioThreadLinks
    /// The pcm, its health and its reopen schedule.
    private var device: DeviceState
    /// The renderer, the period buffer and the pacer.
    private var output: RenderOutput
    /// The stop, the silent tail and the tickets waiting for the audio.
    private var transport = TransportProgress()
    /// Underruns so far, reported at most once a second.
    private var underruns = ThrottledTotal()
    /// Whether rewinding works, and how it went.
    private var rewind = RewindState()

    init(settings: AudioEngine.Settings, playback: (any PCMOutput)?, openDevice: @escaping AudioEngine.DeviceOpener,
         requests: SPSCQueue<Request>, reports: SPSCQueue<Report>, requestWake: EventFD, reportWake: EventFD,
         exitWake: EventFD) {
        self.settings = settings
        links = AudioThreadLinks(requests: requests, reports: reports, requestWake: requestWake,
                                 reportWake: reportWake, exitWake: exitWake)
        device = DeviceState(playback: playback, open: openDevice)
        let periodFrames = max(16, settings.periodFrames)
        let buffer = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * periodFrames)
        buffer.initialize(repeating: 0, count: 2 * periodFrames)
        output = RenderOutput(
            renderer: AmbienceRenderer(sampleRate: settings.sampleRate, maxFrames: periodFrames,
                                       historyFrames: settings.rewindMarginFrames > 0 ? max(settings.bufferFrames, periodFrames) : 0),
            periodFrames: periodFrames, buffer: buffer,
            pacer: PlaybackPacer(sampleRate: settings.sampleRate, aheadLimitFrames: max(settings.bufferFrames, periodFrames)))
        if playback == nil {
            device.failed = true
            device.nextRetryNanos = PlaybackPacer.now() + device.backoffNanos
        }
    }

    deinit { output.buffer.deallocate() }

    /// The audio thread's SCHED_FIFO priority (the thread asks for it as it starts).
    static let realtimePriority: Int32 = 70

    /// The thread body; `realtime`: whether SCHED_FIFO was granted. Returns
    /// when stopped (after signalling `exitWake`).
    func run(realtime: Bool) {
        report(.realtimeScheduling(realtime))
        if device.playback == nil {
            report(.deviceUnavailable(reason: "audio device \"\(settings.device)\" could not be opened at start-up"))
        }
        while step() {}
        device.playback?.drop()
        device.playback?.close()
        device.playback = nil
        forwardRetired()
        links.exitWake.signal()
    }

    /// One turn of the loop; false when the thread should exit.
    private func step() -> Bool {
        links.requestWake.drain()
        while let request = links.requests.pop() { apply(request) }
        if stop.requested.load(ordering: .acquiring) && !transport.stopping {
            transport.stopping = true
            output.renderer.pause(fadeFrames: frames(ms: stop.fadeMs.load(ordering: .relaxed)))
            transport.pendingPauseTicket = nil
        }
        forwardRetired()

        let drained = output.renderer.isSilent && (!device.running || transport.silentTail >= settings.bufferFrames)
        if transport.stopping && (device.playback == nil || drained) { return false }
        guard let playback = device.playback else {
            waitForDevice()
            return true
        }
        if drained {
            // Fully paused and the fade's tail has played out: stop feeding the
            // device and sleep until a request arrives.
            if device.running {
                playback.drop()
                device.running = false
            }
            _ = links.requestWake.wait(timeoutNanos: -1)
            return true
        }
        if !device.running {
            do {
                try playback.prepare()
            } catch {
                deviceFailure(error)
                return true
            }
            device.running = true
            transport.silentTail = 0
            output.pacer.reset(now: PlaybackPacer.now())
        }
        let wait = output.pacer.waitNanos(now: PlaybackPacer.now())
        if wait > 0 && links.requestWake.wait(timeoutNanos: wait) {
            return true  // a request arrived while pacing: apply it first
        }
        // Render only once the device has room, so a request that arrives
        // while it is full is applied first (see `DeviceWait`). A device that
        // stays full for two buffers is left to the blocking write.
        if playback.waitForRoom(wake: links.requestWake.fd, timeoutNanos: 2 * bufferNanos) == .request {
            return true
        }
        renderAndWrite(playback)
        return true
    }

    private func renderAndWrite(_ playback: any PCMOutput) {
        let outcome = output.renderer.render(into: output.buffer, frames: output.periodFrames)
        // Count only wholly silent periods: a buffer of them lets the fade's end play out.
        transport.silentTail = outcome.isSilent && !outcome.fadeOutCompleted ? transport.silentTail + output.periodFrames : 0
        if outcome.isSilent, let ticket = transport.pendingPauseTicket {
            transport.pendingPauseTicket = nil
            report(.paused(ticket: ticket))
        }
        let underruns: Int
        do {
            underruns = try playback.write(output.buffer, frames: output.periodFrames)
        } catch {
            deviceFailure(error)
            return
        }
        device.framesSinceOpen += output.periodFrames
        // A reopened device counts as back only once it has taken more than a
        // buffer (some pcms accept the first writes and fail when flushing).
        if device.failed && device.framesSinceOpen >= settings.bufferFrames + 2 * output.periodFrames {
            device.failed = false
            device.backoffNanos = DeviceState.firstBackoffNanos
            report(.deviceAvailable)
        }
        if let ticket = transport.pendingPlayTicket {
            transport.pendingPlayTicket = nil
            report(.playing(ticket: ticket))
        }
        completeLongFade()
        let delay = playback.delay()
        if let queued = rewind.refillQueued {
            // What the device played between the rewind and this write's end
            // (by its pointer, which some drivers move in ticks), and how long
            // that took by the clock.
            rewind.refillQueued = nil
            rewind.worstRefillFrames = max(rewind.worstRefillFrames, queued + output.periodFrames - delay)
            rewind.worstRefillNanos = max(rewind.worstRefillNanos, PlaybackPacer.now() - rewind.refillSince)
        }
        self.underruns.total += underruns
        if self.underruns.hasNews && self.underruns.takeIfDue(now: PlaybackPacer.now()) {
            report(.underruns(total: self.underruns.total))
        }
        if rewind.rewinds.hasNews && rewind.rewinds.takeIfDue(now: PlaybackPacer.now()) {
            report(.rewinds(total: rewind.rewinds.total, worstRefillFrames: rewind.worstRefillFrames,
                            worstRefillMicroseconds: Int(rewind.worstRefillNanos / 1000)))
        }
        output.pacer.didWrite(frames: output.periodFrames, deviceDelay: delay, now: PlaybackPacer.now())
    }

    /// Before an audible change: takes back what the device has queued except
    /// the margin (`snd_pcm_rewind`) and rewinds the renderer by as much, so
    /// the change is heard about a margin from now instead of after the whole
    /// buffer. `forSwitch`: the change is a crossfade (see
    /// `AmbienceRenderer.rewindableFrames`). A device that can't rewind is
    /// reported once and never asked again; the change then waits for the
    /// queue, as without rewinding.
    private func rewindQueued(forSwitch: Bool) {
        let margin = settings.rewindMarginFrames
        guard margin > 0, !rewind.unavailable, device.running, !output.renderer.isSilent, let playback = device.playback else { return }
        let ours = output.renderer.rewindableFrames(forSwitch: forSwitch)
        guard ours > margin else { return }
        let queued = playback.rewindable()
        if queued < 0 {
            rewindFailed("snd_pcm_rewindable: \(String(cString: snd_strerror(Int32(truncatingIfNeeded: queued))))")
            return
        }
        let before = playback.delay()
        guard queued > margin else {
            if queued == 0 && before > margin + output.periodFrames {
                rewindFailed("snd_pcm_rewindable is 0 with \(before) frames queued")
            }
            return
        }
        let taken = playback.rewind(frames: min(ours, queued - margin))
        if taken < 0 {
            rewindFailed("snd_pcm_rewind: \(String(cString: snd_strerror(Int32(truncatingIfNeeded: taken))))")
            return
        }
        guard taken > 0 else { return }
        let rewound = output.renderer.rewind(frames: taken)
        if rewound != taken {
            // Can't happen (taken ≤ ours); if it did, the device and the renderer
            // disagree on what is queued: stop rewinding rather than repeat audio.
            rewindFailed("the output.renderer took back \(rewound) of \(taken) frames")
            return
        }
        output.pacer.didRewind(frames: taken)
        transport.silentTail = 0
        rewind.rewinds.total += 1
        rewind.refillQueued = max(0, before - taken)
        rewind.refillSince = PlaybackPacer.now()
    }

    private func rewindFailed(_ reason: String) {
        rewind.unavailable = true
        report(.rewindUnavailable(reason: reason))
    }

    private func apply(_ request: Request) {
        switch request {
        case .play(let source, let fadeMs, let ticket):
            if !output.renderer.isPlaying { rewindQueued(forSwitch: false) }  // reverses a fade-out under way
            else if source != nil { rewindQueued(forSwitch: true) }
            output.renderer.play(source, fadeFrames: frames(ms: fadeMs))
            transport.pendingPauseTicket = nil
            transport.pendingPlayTicket = ticket
        case .pause(let fadeMs, let ticket):
            if output.renderer.isPlaying { rewindQueued(forSwitch: false) }
            output.renderer.pause(fadeFrames: frames(ms: fadeMs))
            transport.pendingPlayTicket = nil
            transport.pendingPauseTicket = ticket
            if output.renderer.isSilent { completePause() }
        case .switchTo(let source, let crossfadeMs, let ticket):
            if output.renderer.isPlaying { rewindQueued(forSwitch: true) }
            output.renderer.crossfade(to: source, frames: frames(ms: crossfadeMs))
            if output.renderer.isPlaying {
                transport.pendingPlayTicket = ticket
            } else {
                report(.paused(ticket: ticket))
            }
        case .setGain(let gain, let rampMs):
            if gain != output.renderer.currentGain { rewindQueued(forSwitch: false) }
            output.renderer.setGain(gain, rampFrames: frames(ms: rampMs))
        case .longFade(let multiplier, let overMs, let ticket):
            if Float(multiplier) != output.renderer.longFadeMultiplier { rewindQueued(forSwitch: false) }
            output.renderer.longFade(to: multiplier, frames: frames(ms: overMs))
            transport.pendingLongFadeTicket = ticket
            completeLongFade()
        case .setMuted(let muted, let rampMs):
            if muted != output.renderer.isMuted { rewindQueued(forSwitch: false) }
            output.renderer.setMuted(muted, rampFrames: frames(ms: rampMs))
        }
    }

    /// Reports the pending long fade once the renderer's stage stands still.
    private func completeLongFade() {
        if let ticket = transport.pendingLongFadeTicket, !output.renderer.isLongFading {
            transport.pendingLongFadeTicket = nil
            report(.longFadeDone(ticket: ticket))
        }
    }

    private func completePause() {
        if let ticket = transport.pendingPauseTicket {
            transport.pendingPauseTicket = nil
            report(.paused(ticket: ticket))
        }
    }

    /// Device closed: pauses complete at once; opening is retried on the
    /// backoff schedule (0.5 s doubling to 5 s) whether or not playback is
    /// intended, so `audio` comes back to `ok` by itself (the core refuses
    /// `play` while it is `unavailable`).
    private func waitForDevice() {
        if !output.renderer.isPlaying {
            output.renderer.pause(fadeFrames: 0)
            completePause()
        }
        let now = PlaybackPacer.now()
        if now < device.nextRetryNanos {
            _ = links.requestWake.wait(timeoutNanos: device.nextRetryNanos - now)
            return
        }
        do {
            device.playback = try device.open(settings)
            device.running = false
            device.framesSinceOpen = 0
            // While playing, `deviceAvailable` is reported once the device has
            // taken a buffer; while paused, opening is all that can be checked.
            if !output.renderer.isPlaying {
                device.failed = false
                device.backoffNanos = DeviceState.firstBackoffNanos
                report(.deviceAvailable)
            }
        } catch {
            device.backOff()
            device.nextRetryNanos = PlaybackPacer.now() + device.backoffNanos
        }
    }

    private func deviceFailure(_ error: ALSAError) {
        device.playback?.close()
        device.playback = nil
        device.running = false
        if device.failed {
            // Failed again before proving healthy: back off further, report nothing new.
            device.backOff()
        } else {
            device.failed = true
            device.backoffNanos = DeviceState.firstBackoffNanos
            report(.deviceUnavailable(reason: error.description))
        }
        device.nextRetryNanos = PlaybackPacer.now() + device.backoffNanos
    }

    /// Sends dropped sources to the main thread, only while the report queue
    /// has room (a source must never be released here).
    private func forwardRetired() {
        while links.reports.freeCount > 0, let source = output.renderer.takeRetired() {
            _ = links.reports.push(.retired(source))
            links.reportWake.signal()
        }
    }

    private func report(_ report: Report) {
        if links.reports.freeCount > 1 && links.reports.push(report) {  // keep a slot for retirements
            links.reportWake.signal()
        }
    }

    /// The negotiated buffer's length in nanoseconds.
    private var bufferNanos: Int64 {
        Int64(settings.bufferFrames) * 1_000_000_000 / Int64(max(1, settings.sampleRate))
    }

    private func frames(ms: Int) -> Int {
        max(0, ms) * settings.sampleRate / 1000
    }
}
