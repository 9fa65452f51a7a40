import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import Ambience
import AudioALSA

/// The audio side: the catalog, the engine, audio effects and engine reports.
extension SpeakerRuntime {
    /// Software volume changes ramp over this long, so a fast knob never zippers.
    static let levelRampMs = 60

    /// The sounds in playback order.
    static func makeCatalog(config: SpeakerConfig, logger: Logger) -> [CatalogEntry] {
        BuiltInSounds.all.map { CatalogEntry(id: $0.id, name: $0.name, summary: $0.summary) }
    }

    static func makeEngine(config: SpeakerConfig, logger: Logger, demo: Bool) -> AudioEngine {
        AudioDevices.silenceLibraryMessages()
        var settings = AudioEngine.Settings(device: config.audio.device, sampleRate: config.audio.sampleRate,
                                            periodFrames: config.audio.periodFrames, bufferFrames: config.audio.bufferFrames)
        if demo && config.audio.device == "default" && !AudioDevices.canOpen(device: "default") {
            settings.device = "file:'ambient-demo.wav',wav"
            logger.notice("no sound card: the demo writes its audio to ambient-demo.wav")
        }
        return AudioEngine(settings: settings, logger: logger.named("audio"))
    }

    func startAudio() throws {
        do {
            try engine.start(failIfUnavailable: false)
        } catch {
            throw StartupError(exitCode: 2, message: "audio: \(error)")
        }
        loop.addReader(fd: engine.reportFD) { [unowned self] in self.engineReports() }
    }

    func perform(_ request: AudioRequest) {
        let rate = engine.sampleRate
        func source(_ id: String) -> SoundSource? {
            guard let sound = BuiltInSounds.sound(id: id) else {
                logger.error("sound \"\(id)\" is in the catalog but has no source")
                return nil
            }
            return sound.makeSource(sampleRate: rate)
        }
        let sent: Bool
        switch request {
        case let .play(id, fadeMs, ticket):
            guard let s = source(id) else { return }
            sent = engine.send(.play(s, fadeMs: fadeMs, ticket: ticket))
        case let .switchTo(id, crossfadeMs, ticket):
            guard let s = source(id) else { return }
            sent = engine.send(.switchTo(s, crossfadeMs: crossfadeMs, ticket: ticket))
        case let .pause(fadeMs, ticket):
            sent = engine.send(.pause(fadeMs: fadeMs, ticket: ticket))
        case .setLevel(let level):
            sent = engine.send(.setGain(VolumeCurve.gain(level: level), rampMs: Self.levelRampMs))
        }
        if !sent { logger.error("the audio engine did not take \(request)") }
    }

    /// Drains the audio engine's reports into the core.
    func engineReports() {
        for report in engine.drainReports() {
            switch report {
            case .playing(let ticket): dispatch(.engine(.playing(ticket: ticket), at: now()))
            case .paused(let ticket): dispatch(.engine(.paused(ticket: ticket), at: now()))
            case .deviceAvailable: dispatch(.engine(.available, at: now()))
            case .deviceUnavailable(let reason): dispatch(.engine(.unavailable(reason: reason), at: now()))
            case .underruns(let total):
                logger.warning("audio underrun (\(total) so far)")
                dispatch(.engine(.underruns(total: total), at: now()))
            case .realtimeScheduling(let granted):
                if granted { logger.info("audio thread runs with SCHED_FIFO real-time priority") }
                else { logger.notice("audio thread could not get SCHED_FIFO (needs root or CAP_SYS_NICE / LimitRTPRIO); running at normal priority") }
            case .retired:
                break // released here, on the main thread, as the report goes out of scope
            }
        }
    }
}
