// SPDX-License-Identifier: Apache-2.0
import Ambience
import SpeakerSystem
import Synchronization

// The audio thread's state, grouped by concern: one value per concern, each
// stored once in `AudioThreadWorker`. All of it lives inline in the worker
// (no allocation after start); the hot path reads and writes fields in
// place. Audio thread only, except `AudioThreadStop` and the queues' other
// ends in `AudioThreadLinks`.

/// What the main thread sets to stop the audio thread (`AudioEngine.shutdown`):
/// atomics, so the thread reads them without a lock. Any thread.
final class AudioThreadStop: Sendable {
    /// Set once: fade out over `fadeMs`, play the tail, close the pcm, exit.
    let requested = Atomic<Bool>(false)
    /// The stop's fade, read after `requested` (relaxed: `requested` releases it).
    let fadeMs = Atomic<Int>(0)
}

/// The audio thread's side of its links to the main thread: the two SPSC
/// queues (the thread pops requests and pushes reports) and the eventfds
/// that wake each side. Immutable references; the queues and eventfds are
/// the lock-free, allocation-free parts.
struct AudioThreadLinks {
    let requests: SPSCQueue<AudioEngine.Request>
    let reports: SPSCQueue<AudioEngine.Report>
    /// Signalled by the main thread with each request (and the stop).
    let requestWake: EventFD
    /// Signalled here with each report.
    let reportWake: EventFD
    /// Signalled here as the thread exits.
    let exitWake: EventFD
}

/// The pcm and its health: whether it is open and running, and the reopen
/// schedule after a failure (0.5 s doubling to 5 s).
struct DeviceState {
    /// The open pcm, nil while closed (failed, or unavailable at start-up).
    var playback: (any PCMOutput)?
    /// Opens the pcm again after a failure.
    let open: AudioEngine.DeviceOpener
    /// The pcm is prepared and being fed (false while fully paused or closed).
    var running = false
    /// A failure was reported and the device has not proved healthy since.
    var failed = false
    /// Frames written since the last (re)open, to tell when it proved healthy.
    var framesSinceOpen = 0
    /// The current wait between reopen attempts.
    var backoffNanos = DeviceState.firstBackoffNanos
    /// No reopen attempt before this instant (CLOCK_MONOTONIC ns).
    var nextRetryNanos: Int64 = 0

    static let firstBackoffNanos: Int64 = 500_000_000
    static let maxBackoffNanos: Int64 = 5_000_000_000

    /// The next, longer wait between reopen attempts.
    mutating func backOff() {
        backoffNanos = min(backoffNanos * 2, Self.maxBackoffNanos)
    }
}

/// What turns requests into samples: the renderer, the period buffer it
/// renders into (allocated once, freed by the worker's deinit) and the
/// pacer that holds clockless pcms to real time.
struct RenderOutput {
    let renderer: AmbienceRenderer
    /// Frames per period (at least 16).
    let periodFrames: Int
    /// One interleaved stereo period.
    let buffer: UnsafeMutablePointer<Int16>
    var pacer: PlaybackPacer
}

/// Where playback stands between requests and the device: the stop under
/// way, how much silence has been written, and the tickets waiting for the
/// audio to confirm a play or a pause.
struct TransportProgress {
    /// The stop's fade has begun; the thread exits once it has played out.
    var stopping = false
    /// Frames of wholly silent periods written in a row (a buffer of them lets a fade's end play out).
    var silentTail = 0
    /// Reported `.playing` with the next written period.
    var pendingPlayTicket: UInt64?
    /// Reported `.paused` once a period renders silent.
    var pendingPauseTicket: UInt64?
    /// Reported `.longFadeDone` once the renderer's long fade stands still.
    var pendingLongFadeTicket: UInt64?
}

/// A running total sent to the main thread at most once a second, so a
/// device in trouble can't flood it (and MQTT) with a report per period.
struct ThrottledTotal {
    var total = 0
    private(set) var reported = 0
    private var reportedAt: Int64 = 0

    /// Whether the total changed since it was last reported.
    var hasNews: Bool { total != reported }

    /// Marks the total reported when a second has passed since the last
    /// report (`now`: CLOCK_MONOTONIC ns); false when it must wait.
    mutating func takeIfDue(now: Int64) -> Bool {
        guard now - reportedAt >= 1_000_000_000 else { return false }
        reported = total
        reportedAt = now
        return true
    }
}

/// Rewinding the device queue before an audible change
/// (`AudioThreadWorker.rewindQueued`): whether it is still tried, how often
/// it ran, and the worst refill seen (what the device played between a
/// rewind and the write after it, in frames by its pointer and in time).
struct RewindState {
    /// Off after the first failure, for good.
    var unavailable = false
    var rewinds = ThrottledTotal()
    var worstRefillFrames = 0
    var worstRefillNanos: Int64 = 0
    /// Frames left queued by the last rewind, until the write that follows it.
    var refillQueued: Int?
    /// When that rewind happened (CLOCK_MONOTONIC ns).
    var refillSince: Int64 = 0
}
