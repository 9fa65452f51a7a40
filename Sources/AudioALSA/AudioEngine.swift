// SPDX-License-Identifier: Apache-2.0
import Ambience
import SpeakerSystem
#if canImport(Glibc)
import Glibc
#endif

/// Plays ambience through ALSA on a dedicated real-time audio thread.
///
/// Use from the main thread only: `start()`, then poll `reportFD` in the main
/// loop; when it is readable call `drainReports()`; send transport and volume
/// changes with `send(_:)`; stop with `shutdown(fadeMs:)`. The audio thread owns
/// the pcm and the renderer; the two sides talk through lock-free SPSC queues
/// and eventfds, so the main thread never blocks the audio and vice versa.
public final class AudioEngine {
    /// The settings asked for.
    public let settings: Settings
    /// What the device accepted at start (rate/period/buffer), nil before `start()`
    /// or when the device was unavailable at start-up.
    public private(set) var negotiated: Settings?
    private let logger: Logger
    private let requests = SPSCQueue<Request>(minimumCapacity: 64)
    private let reports = SPSCQueue<Report>(minimumCapacity: 256)
    private let wakeups: Result<(request: EventFD, report: EventFD, exit: EventFD), ALSAError>
    private var worker: AudioThreadWorker?
    private var thread: OSThread?
    private let openDevice: DeviceOpener

    /// Creates a stopped engine. `logger` receives the resolved configuration and
    /// the notable reports (main thread only; the audio thread never logs).
    public convenience init(settings: Settings, logger: Logger) {
        self.init(settings: settings, logger: logger, openDevice: Self.openALSA)
    }

    /// An engine whose device comes from `openDevice` (tests: a pcm behind a
    /// hand-driven clock, see `PCMOutput`).
    init(settings: Settings, logger: Logger, openDevice: @escaping DeviceOpener) {
        self.settings = settings
        self.logger = logger
        self.openDevice = openDevice
        wakeups = Result { () throws(ALSAError) in
            do throws(SystemError) {
                return (try EventFD(), try EventFD(), try EventFD())
            } catch {
                throw ALSAError(device: settings.device, function: error.operation, code: -error.errno)
            }
        }
    }

    /// The eventfds close when their last owner lets go: after a timed-out
    /// shutdown the detached thread's worker still holds them.
    deinit {
        if thread != nil { shutdown(fadeMs: 0) }
    }

    /// Readable when reports are pending: add it to the main loop's poll set and
    /// call `drainReports()` when it fires. -1 if eventfds could not be created
    /// (then `start()` throws).
    public var reportFD: Int32 {
        (try? wakeups.get())?.report.fd ?? -1
    }

    /// True between a successful `start()` and `shutdown(fadeMs:)`.
    public var isRunning: Bool { thread != nil }

    /// Opens the device on the calling thread, logs the resolved configuration
    /// and starts the audio thread (paused, unity gain, no source).
    ///
    /// With `failIfUnavailable` (default), a device that can't be opened throws
    /// an `ALSAError` naming the device and the failing call. Without it, the
    /// engine starts anyway, reports `deviceUnavailable` and keeps retrying while
    /// playback is intended (for a USB DAC that is plugged in later).
    public func start(failIfUnavailable: Bool = true) throws(ALSAError) {
        guard thread == nil else { return }
        let fds = try wakeups.get()
        var playback: (any PCMOutput)?
        var effective = settings
        do {
            let opened = try openDevice(settings)
            effective.sampleRate = opened.negotiated.sampleRate
            effective.periodFrames = opened.negotiated.periodFrames
            effective.bufferFrames = opened.negotiated.bufferFrames
            negotiated = effective
            playback = opened
            logger.info("device \"\(settings.device)\": S16_LE stereo \(effective.sampleRate) Hz, period \(effective.periodFrames) frames, buffer \(effective.bufferFrames) frames (asked \(settings.sampleRate)/\(settings.periodFrames)/\(settings.bufferFrames))")
        } catch {
            if failIfUnavailable { throw error }
            logger.warning("\(error); starting without it and retrying while playback is intended")
        }
        if effective.sampleRate != settings.sampleRate {
            logger.warning("device runs at \(effective.sampleRate) Hz, not \(settings.sampleRate) Hz; sounds are generated at \(effective.sampleRate) Hz")
        }
        let worker = AudioThreadWorker(settings: effective, playback: playback, openDevice: openDevice,
                                       requests: requests, reports: reports,
                                       requestWake: fds.request, reportWake: fds.report, exitWake: fds.exit)
        do throws(SystemError) {
            thread = try OSThread.start(name: "audio", realtimePriority: AudioThreadWorker.realtimePriority) { realtime in
                worker.run(realtime: realtime ?? false)
            }
        } catch {
            throw ALSAError(device: settings.device, function: error.operation, code: -error.errno)
        }
        self.worker = worker
    }

    /// The sample rate sounds must be generated at (negotiated, else asked).
    public var sampleRate: Int { negotiated?.sampleRate ?? settings.sampleRate }

    /// Queues `request` for the audio thread and wakes it. Main thread only.
    /// Returns false (and logs) if the queue is full or the engine is not running.
    @discardableResult
    public func send(_ request: Request) -> Bool {
        guard thread != nil, case .success(let fds) = wakeups else {
            logger.warning("request dropped: the audio engine is not running")
            return false
        }
        guard requests.push(request) else {
            logger.warning("request dropped: the audio request queue is full")
            return false
        }
        fds.request.signal()
        return true
    }

    /// Takes every pending report (oldest first) and resets `reportFD`. Logs
    /// device changes, underruns and the scheduling result. Releasing the
    /// returned `.retired` sources here is what keeps deinit off the audio
    /// thread. Main thread only.
    public func drainReports() -> [Report] {
        if case .success(let fds) = wakeups { fds.report.drain() }
        var out: [Report] = []
        while let report = reports.pop() {
            switch report {
            case .deviceUnavailable(let reason): logger.warning("device unavailable: \(reason); retrying")
            case .deviceAvailable: logger.notice("device \"\(settings.device)\" available again")
            case .underruns(let total): logger.warning("underrun recovered (\(total) so far)")
            case .realtimeScheduling(let ok):
                if ok { logger.info("audio thread runs SCHED_FIFO priority 70") } else { logger.notice("audio thread runs without real-time priority: SCHED_FIFO refused (needs root, CAP_SYS_NICE or LimitRTPRIO=)") }
            case .rewindUnavailable(let reason):
                let queueMs = 1000 * (negotiated ?? settings).bufferFrames / max(sampleRate, 1)
                logger.notice("device \"\(settings.device)\" can't rewind its queue (\(reason)): changes are heard after the queued audio (up to \(queueMs) ms), as without rewinding")
            case .rewinds(let total, let worst, let micros):
                logger.info("rewound the device queue \(total) times; at worst the re-rendered audio reached it \(micros) µs after the rewind, and it had played \(worst) frames by its pointer (margin \(settings.rewindMarginFrames) frames)")
            default: break
            }
            out.append(report)
        }
        return out
    }

    /// Fades out over `fadeMs`, stops the audio thread and closes the pcm.
    /// Bounded: waits at most `fadeMs` + the buffer length + 2 s; if the thread
    /// is stuck in the driver it is detached and leaked, and an error is logged.
    /// Reports still queued can be read with `drainReports()` afterwards.
    /// Main thread only.
    public func shutdown(fadeMs: Int) {
        guard let thread, let worker, case .success(let fds) = wakeups else { return }
        worker.stop.fadeMs.store(max(0, fadeMs), ordering: .relaxed)
        worker.stop.requested.store(true, ordering: .releasing)
        fds.request.signal()
        let bufferMs = 1000 * settings.bufferFrames / max(settings.sampleRate, 1)
        let limitNanos = Int64(max(0, fadeMs) + bufferMs + 2000) * 1_000_000
        if fds.exit.wait(timeoutNanos: limitNanos) {
            thread.join()
            self.thread = nil
            self.worker = nil
        } else {
            logger.error("audio thread did not stop within \(limitNanos / 1_000_000) ms; detaching it")
            thread.detach()
        }
    }
}
