// SPDX-License-Identifier: Apache-2.0
import Ambience

/// The audio engine as the audio service drives it: the ALSA engine (its own
/// thread; AudioALSA), or an in-memory output in the runtime tests. Loop
/// thread only.
public protocol AudioOutput: AnyObject {
    /// Readable when reports are waiting (`drainReports()`).
    var reportFD: Int32 { get }
    /// The rate sources must render at.
    var sampleRate: Int { get }
    /// Opens the device and starts the audio thread. A device that is not
    /// there is retried in the background (reported `.deviceUnavailable`),
    /// not an error; what throws is a thread or queue that cannot be made.
    func startOutput() throws(AudioOutputError)
    /// Queues `request` for the audio thread; false when its queue is full.
    func send(_ request: AudioEngineRequest) -> Bool
    /// The reports since the last drain, in order.
    func drainReports() -> [AudioEngineReport]
    /// Fades out (at most `fadeMs`), closes the device, joins the thread.
    func shutdown(fadeMs: Int)
}

/// Why the audio output did not start, in the words of the call that failed.
public struct AudioOutputError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// The sounds the audio service can play: the catalog and the read-ahead
/// thread for file sounds (SoundFiles), which turn a sound id into a source
/// for the engine. Loop thread only.
public protocol SoundLibrary: AnyObject {
    /// Starts the read-ahead thread; when it cannot start, says so in the
    /// log and file sounds decode on the audio thread.
    func start()
    /// A fresh source for the sound `id`, rendering at `sampleRate`, or why there is none.
    func source(id: String, sampleRate: Int) -> Result<any SoundSource, SoundUnavailable>
    /// A source the engine retired (`.retired`), on the loop thread: notes
    /// what went wrong while it played (a file read-ahead that fell behind).
    func retired(_ source: any SoundSource)
    /// Stops the read-ahead thread.
    func shutdown()
}

/// Why a sound in the catalog cannot be played.
public struct SoundUnavailable: Error, Sendable, Equatable {
    /// Words that follow the sound's name in the core's log line.
    public var reason: String

    public init(reason: String) { self.reason = reason }
}

/// An ALSA mixer element (`volume.mode: "alsa-mixer"`) as the audio service
/// drives it: written by level, read back after each write and whenever it
/// changes. Loop thread only.
public protocol MixerElement: AnyObject {
    /// Writes `level` to the element; on failure says why. Either way the
    /// reading afterwards (the truth the core then publishes).
    func write(level: Double) -> (Result<Void, MixerWriteFailure>, MixerReading)
    /// Stops watching the element.
    func close()
}

/// Opens the mixer element; `changed` gets each reading taken when the
/// element signals a change (alsamixer, another program).
public typealias MixerOpener = (_ changed: @escaping (MixerReading) -> Void) throws(MixerError) -> any MixerElement

/// What a mixer element holds: dB (nil = muted) and the level it maps to.
public struct MixerReading: Equatable, Sendable {
    public var db: Double?
    public var level: Double

    public init(db: Double?, level: Double) {
        self.db = db
        self.level = level
    }
}

/// Why a mixer write failed, and the level the element holds afterwards.
public struct MixerWriteFailure: Error, Equatable, Sendable {
    public var reason: String
    public var actual: Double?

    public init(reason: String, actual: Double?) {
        self.reason = reason
        self.actual = actual
    }
}

/// Why a mixer element did not open, in the words of the call that failed.
public struct MixerError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) { self.description = description }
}

/// A command from the loop thread to the audio thread (``AudioOutput/send(_:)``).
public enum AudioEngineRequest: Sendable {
    /// Start or resume with a fade-in; a source switches to it (crossfading if
    /// audible), nil resumes the current one (with no source loaded, silence
    /// is played). Answered by `playing(ticket)` after the first write that
    /// carries it (delayed while the device is unavailable).
    case play(SoundSource?, fadeMs: Int, ticket: UInt64)
    /// Fade out and stop feeding the device. Answered by `paused(ticket)` once
    /// the fade-out has completed (a pause overtaken by a later play is not answered).
    case pause(fadeMs: Int, ticket: UInt64)
    /// Switch sound: an equal-power crossfade when playing (answered by
    /// `playing(ticket)`), a plain replacement when paused (answered by `paused(ticket)`).
    case switchTo(SoundSource, crossfadeMs: Int, ticket: UInt64)
    /// Ramp the software volume gain (linear; see `VolumeCurve`) over `rampMs`.
    case setGain(Float, rampMs: Int)
    /// Move the long fade's multiplier to `to` in [0, 1] along the volume
    /// curve over `overMs` (see `AmbienceRenderer.longFade`). Answered by
    /// `longFadeDone(ticket)` once the multiplier is there; a long fade
    /// overtaken by another is not answered. The stage moves only while audio
    /// is rendered, so a fade asked while paused completes after resuming
    /// (one of 0 ms is answered at once).
    case longFade(to: Double, overMs: Int, ticket: UInt64)
    /// Ramp the mute multiplier to silence (`true`) or back over `rampMs`.
    /// The stream keeps running: software silence, the level is untouched.
    case setMuted(Bool, rampMs: Int)
}

extension AudioEngineRequest {
    /// Ramp to the speaker's `level` in [0, 1] over `rampMs`: `setGain` with
    /// the gain the volume curve gives that level.
    public static func setLevel(_ level: Double, rampMs: Int) -> AudioEngineRequest {
        .setGain(VolumeCurve.gain(level: level), rampMs: rampMs)
    }
}

/// News from the audio thread, read on the loop thread with ``AudioOutput/drainReports()``.
public enum AudioEngineReport: Sendable {
    /// The request with this ticket took effect and its audio is leaving for the device.
    case playing(ticket: UInt64)
    /// The pause (or paused switch) with this ticket completed: output is silent.
    case paused(ticket: UInt64)
    /// The long fade with this ticket reached its multiplier.
    case longFadeDone(ticket: UInt64)
    /// The device opened (again) after being unavailable and accepts audio.
    case deviceAvailable
    /// The device failed and is closed; reopening is retried (0.5 s … 5 s) while playback is intended.
    case deviceUnavailable(reason: String)
    /// Total underruns recovered so far (sent when the count changes).
    case underruns(total: Int)
    /// Whether the audio thread got SCHED_FIFO real-time priority.
    case realtimeScheduling(Bool)
    /// A source the audio thread no longer uses; release it here, on the main thread.
    case retired(SoundSource)
    /// The device can't take back queued frames (sent once per engine): changes
    /// are heard after the queued buffer, as without rewinding.
    case rewindUnavailable(reason: String)
    /// Rewinds so far, and the most frames the device played between a rewind
    /// and the end of the write that replaced them, by its pointer and by the
    /// clock (both must stay below the margin; at most one report a second).
    case rewinds(total: Int, worstRefillFrames: Int, worstRefillMicroseconds: Int)
}
