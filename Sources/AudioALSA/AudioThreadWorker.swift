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
    // thread at pthread_create; after that, only `stopRequested`/`stopFadeMs`
    // (atomics) and the queues' producer/consumer ends are touched by main.
    typealias Request = AudioEngine.Request
    typealias Report = AudioEngine.Report

    let stopRequested = Atomic<Bool>(false)
    let stopFadeMs = Atomic<Int>(0)

    private let settings: AudioEngine.Settings
    private let requests: SPSCQueue<Request>
    private let reports: SPSCQueue<Report>
    private let requestWake: EventFD
    private let reportWake: EventFD
    private let exitWake: EventFD
    private var playback: (any PCMOutput)?
    private let openDevice: AudioEngine.DeviceOpener
    private let renderer: AmbienceRenderer
    private let periodFrames: Int
    private let buffer: UnsafeMutablePointer<Int16>
    private var pacer: PlaybackPacer

    private var deviceRunning = false
    private var silentTail = 0
    private var stopping = false
    private var pendingPlayTicket: UInt64?
    private var pendingPauseTicket: UInt64?
    private var underrunTotal = 0
    private var underrunsReported = 0
    private var underrunReportNanos: Int64 = 0
    private var deviceFailed = false
    private var framesSinceOpen = 0
    private var backoffNanos: Int64 = 500_000_000
    private var nextRetryNanos: Int64 = 0
    private static let maxBackoffNanos: Int64 = 5_000_000_000

    // Rewinding (see `rewindQueued`): off after the first failure, for good.
    private var rewindUnavailable = false
    private var rewindCount = 0
    private var rewindsReported = 0
    private var rewindReportNanos: Int64 = 0
    private var worstRefill = 0
    private var worstRefillNanos: Int64 = 0
    /// Frames left queued by the last rewind and when, until the write that follows it.
    private var refillQueued: Int?
    private var refillSince: Int64 = 0

    init(settings: AudioEngine.Settings, playback: (any PCMOutput)?, openDevice: @escaping AudioEngine.DeviceOpener,
         requests: SPSCQueue<Request>, reports: SPSCQueue<Report>, requestWake: EventFD, reportWake: EventFD,
         exitWake: EventFD) {
        self.settings = settings
        self.playback = playback
        self.openDevice = openDevice
        self.requests = requests
        self.reports = reports
        self.requestWake = requestWake
        self.reportWake = reportWake
        self.exitWake = exitWake
        periodFrames = max(16, settings.periodFrames)
        renderer = AmbienceRenderer(sampleRate: settings.sampleRate, maxFrames: periodFrames,
                                    historyFrames: settings.rewindMarginFrames > 0 ? max(settings.bufferFrames, periodFrames) : 0)
        buffer = .allocate(capacity: 2 * periodFrames)
        buffer.initialize(repeating: 0, count: 2 * periodFrames)
        pacer = PlaybackPacer(sampleRate: settings.sampleRate, aheadLimitFrames: max(settings.bufferFrames, periodFrames))
        if playback == nil {
            deviceFailed = true
            nextRetryNanos = PlaybackPacer.now() + backoffNanos
        }
    }

    deinit { buffer.deallocate() }

    /// The audio thread's SCHED_FIFO priority (the thread asks for it as it starts).
    static let realtimePriority: Int32 = 70

    /// The thread body; `realtime`: whether SCHED_FIFO was granted. Returns
    /// when stopped (after signalling `exitWake`).
    func run(realtime: Bool) {
        report(.realtimeScheduling(realtime))
        if playback == nil {
            report(.deviceUnavailable(reason: "audio device \"\(settings.device)\" could not be opened at start-up"))
        }
        while step() {}
        playback?.drop()
        playback?.close()
        playback = nil
        forwardRetired()
        exitWake.signal()
    }

    /// One turn of the loop; false when the thread should exit.
    private func step() -> Bool {
        requestWake.drain()
        while let request = requests.pop() { apply(request) }
        if stopRequested.load(ordering: .acquiring) && !stopping {
            stopping = true
            renderer.pause(fadeFrames: frames(ms: stopFadeMs.load(ordering: .relaxed)))
            pendingPauseTicket = nil
        }
        forwardRetired()

        let drained = renderer.isSilent && (!deviceRunning || silentTail >= settings.bufferFrames)
        if stopping && (playback == nil || drained) { return false }
        guard let playback else {
            waitForDevice()
            return true
        }
        if drained {
            // Fully paused and the fade's tail has played out: stop feeding the
            // device and sleep until a request arrives.
            if deviceRunning {
                playback.drop()
                deviceRunning = false
            }
            _ = requestWake.wait(timeoutNanos: -1)
            return true
        }
        if !deviceRunning {
            do {
                try playback.prepare()
            } catch {
                deviceFailure(error)
                return true
            }
            deviceRunning = true
            silentTail = 0
            pacer.reset(now: PlaybackPacer.now())
        }
        let wait = pacer.waitNanos(now: PlaybackPacer.now())
        if wait > 0 && requestWake.wait(timeoutNanos: wait) {
            return true  // a request arrived while pacing: apply it first
        }
        renderAndWrite(playback)
        return true
    }

    private func renderAndWrite(_ playback: any PCMOutput) {
        let outcome = renderer.render(into: buffer, frames: periodFrames)
        // Count only wholly silent periods: a buffer of them lets the fade's end play out.
        silentTail = outcome.isSilent && !outcome.fadeOutCompleted ? silentTail + periodFrames : 0
        if outcome.isSilent, let ticket = pendingPauseTicket {
            pendingPauseTicket = nil
            report(.paused(ticket: ticket))
        }
        let underruns: Int
        do {
            underruns = try playback.write(buffer, frames: periodFrames)
        } catch {
            deviceFailure(error)
            return
        }
        framesSinceOpen += periodFrames
        // A reopened device counts as back only once it has taken more than a
        // buffer (some pcms accept the first writes and fail when flushing).
        if deviceFailed && framesSinceOpen >= settings.bufferFrames + 2 * periodFrames {
            deviceFailed = false
            backoffNanos = 500_000_000
            report(.deviceAvailable)
        }
        if let ticket = pendingPlayTicket {
            pendingPlayTicket = nil
            report(.playing(ticket: ticket))
        }
        let delay = playback.delay()
        if let queued = refillQueued {
            // What the device played between the rewind and this write's end
            // (by its pointer, which some drivers move in ticks), and how long
            // that took by the clock.
            refillQueued = nil
            worstRefill = max(worstRefill, queued + periodFrames - delay)
            worstRefillNanos = max(worstRefillNanos, PlaybackPacer.now() - refillSince)
        }
        underrunTotal += underruns
        // At most one underrun report a second, so a device in trouble can't
        // flood the main thread (and MQTT) with a publication per period.
        if underrunTotal != underrunsReported {
            let now = PlaybackPacer.now()
            if now - underrunReportNanos >= 1_000_000_000 {
                underrunsReported = underrunTotal
                underrunReportNanos = now
                report(.underruns(total: underrunTotal))
            }
        }
        if rewindCount != rewindsReported {
            let now = PlaybackPacer.now()
            if now - rewindReportNanos >= 1_000_000_000 {
                rewindsReported = rewindCount
                rewindReportNanos = now
                report(.rewinds(total: rewindCount, worstRefillFrames: worstRefill,
                                worstRefillMicroseconds: Int(worstRefillNanos / 1000)))
            }
        }
        pacer.didWrite(frames: periodFrames, deviceDelay: delay, now: PlaybackPacer.now())
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
        guard margin > 0, !rewindUnavailable, deviceRunning, !renderer.isSilent, let playback else { return }
        let ours = renderer.rewindableFrames(forSwitch: forSwitch)
        guard ours > margin else { return }
        let queued = playback.rewindable()
        if queued < 0 {
            rewindFailed("snd_pcm_rewindable: \(String(cString: snd_strerror(Int32(truncatingIfNeeded: queued))))")
            return
        }
        let before = playback.delay()
        guard queued > margin else {
            if queued == 0 && before > margin + periodFrames {
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
        let rewound = renderer.rewind(frames: taken)
        if rewound != taken {
            // Can't happen (taken ≤ ours); if it did, the device and the renderer
            // disagree on what is queued: stop rewinding rather than repeat audio.
            rewindFailed("the renderer took back \(rewound) of \(taken) frames")
            return
        }
        pacer.didRewind(frames: taken)
        silentTail = 0
        rewindCount += 1
        refillQueued = max(0, before - taken)
        refillSince = PlaybackPacer.now()
    }

    private func rewindFailed(_ reason: String) {
        rewindUnavailable = true
        report(.rewindUnavailable(reason: reason))
    }

    private func apply(_ request: Request) {
        switch request {
        case .play(let source, let fadeMs, let ticket):
            if !renderer.isPlaying { rewindQueued(forSwitch: false) }  // reverses a fade-out under way
            else if source != nil { rewindQueued(forSwitch: true) }
            renderer.play(source, fadeFrames: frames(ms: fadeMs))
            pendingPauseTicket = nil
            pendingPlayTicket = ticket
        case .pause(let fadeMs, let ticket):
            if renderer.isPlaying { rewindQueued(forSwitch: false) }
            renderer.pause(fadeFrames: frames(ms: fadeMs))
            pendingPlayTicket = nil
            pendingPauseTicket = ticket
            if renderer.isSilent { completePause() }
        case .switchTo(let source, let crossfadeMs, let ticket):
            if renderer.isPlaying { rewindQueued(forSwitch: true) }
            renderer.crossfade(to: source, frames: frames(ms: crossfadeMs))
            if renderer.isPlaying {
                pendingPlayTicket = ticket
            } else {
                report(.paused(ticket: ticket))
            }
        case .setGain(let gain, let rampMs):
            if gain != renderer.currentGain { rewindQueued(forSwitch: false) }
            renderer.setGain(gain, rampFrames: frames(ms: rampMs))
        }
    }

    private func completePause() {
        if let ticket = pendingPauseTicket {
            pendingPauseTicket = nil
            report(.paused(ticket: ticket))
        }
    }

    /// Device closed: pauses complete at once; opening is retried on the
    /// backoff schedule (0.5 s doubling to 5 s) whether or not playback is
    /// intended, so `audio` comes back to `ok` by itself (the core refuses
    /// `play` while it is `unavailable`).
    private func waitForDevice() {
        if !renderer.isPlaying {
            renderer.pause(fadeFrames: 0)
            completePause()
        }
        let now = PlaybackPacer.now()
        if now < nextRetryNanos {
            _ = requestWake.wait(timeoutNanos: nextRetryNanos - now)
            return
        }
        do {
            playback = try openDevice(settings)
            deviceRunning = false
            framesSinceOpen = 0
            // While playing, `deviceAvailable` is reported once the device has
            // taken a buffer; while paused, opening is all that can be checked.
            if !renderer.isPlaying {
                deviceFailed = false
                backoffNanos = 500_000_000
                report(.deviceAvailable)
            }
        } catch {
            backoffNanos = min(backoffNanos * 2, Self.maxBackoffNanos)
            nextRetryNanos = PlaybackPacer.now() + backoffNanos
        }
    }

    private func deviceFailure(_ error: ALSAError) {
        playback?.close()
        playback = nil
        deviceRunning = false
        if deviceFailed {
            // Failed again before proving healthy: back off further, report nothing new.
            backoffNanos = min(backoffNanos * 2, Self.maxBackoffNanos)
        } else {
            deviceFailed = true
            backoffNanos = 500_000_000
            report(.deviceUnavailable(reason: error.description))
        }
        nextRetryNanos = PlaybackPacer.now() + backoffNanos
    }

    /// Sends dropped sources to the main thread, only while the report queue
    /// has room (a source must never be released here).
    private func forwardRetired() {
        while reports.freeCount > 0, let source = renderer.takeRetired() {
            _ = reports.push(.retired(source))
            reportWake.signal()
        }
    }

    private func report(_ report: Report) {
        if reports.freeCount > 1 && reports.push(report) {  // keep a slot for retirements
            reportWake.signal()
        }
    }

    private func frames(ms: Int) -> Int {
        max(0, ms) * settings.sampleRate / 1000
    }
}
