import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import Ambience
import AudioALSA
import SoundFiles

/// The audio side: the catalog, the engine, audio effects and engine reports.
/// The alsa-mixer volume lives in `+Mixer`.
extension SpeakerRuntime {
    /// Software volume changes ramp over this long, so a fast knob never zippers.
    static let levelRampMs = 60

    /// Scans the sounds directory once, logging each skipped file once (with
    /// its reason), and creates the read-ahead thread for file sounds.
    static func makeAudioParts(config: SpeakerConfig, logger: Logger) -> AudioParts {
        let log = logger.named("sounds")
        let catalog = SoundCatalog.load(directory: config.audio.soundsDirectory)
        if let problem = catalog.directoryProblem { log.notice("no file sounds: \(problem)") }
        for skipped in catalog.skipped { log.warning("skipping \(skipped.path): \(skipped.reason)") }
        for note in catalog.notes { log.warning(note) }
        let files = catalog.sounds.count - BuiltInSounds.all.count
        log.info("catalog: \(catalog.sounds.count) sounds (\(BuiltInSounds.all.count) built-in, \(files) from \(config.audio.soundsDirectory)), \(catalog.skipped.count) skipped")
        let streamer: FileStreamer?
        do {
            streamer = try FileStreamer(logger: logger.named("sounds"), loopMemoryBytes: config.audio.loopMemoryKB * 1024)
        } catch {
            log.error("no read-ahead thread (\(error)); file sounds decode on the audio thread")
            streamer = nil
        }
        return AudioParts(catalog: catalog, streamer: streamer)
    }

    /// The sounds in playback order.
    static func makeCatalog(parts: AudioParts) -> [CatalogEntry] {
        parts.catalog.entries
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
            try audioParts.streamer?.start()
        } catch {
            logger.error("sounds: read-ahead thread did not start (\(error)); file sounds decode on the audio thread")
        }
        do {
            try engine.start(failIfUnavailable: false)
        } catch {
            throw StartupError(exitCode: 2, message: "audio: \(error)")
        }
        loop.addReader(fd: engine.reportFD) { [unowned self] in self.engineReports() }
        if config.volume.mode == .alsaMixer { try startMixer() }
    }

    /// Stops the read-ahead thread (after the engine has stopped). Main thread.
    func stopAudioParts() {
        audioParts.streamer?.shutdown()
    }

    func perform(_ request: AudioRequest) {
        let rate = engine.sampleRate
        func source(_ id: String) -> SoundSource? {
            guard let sound = audioParts.catalog.sound(id: id) else {
                logger.error("sound \"\(id)\" is in the catalog but has no source")
                return nil
            }
            do {
                return try SoundCatalog.makeSource(sound, sampleRate: rate, streamer: audioParts.streamer)
            } catch {
                logger.error("sound \"\(id)\" cannot be played: \(error)")
                return nil
            }
        }
        let sent: Bool
        switch request {
        case let .play(id, fadeMs, ticket):
            // Without a source the engine resumes what it has (or plays silence),
            // and still answers the ticket, so the core never waits forever.
            sent = engine.send(.play(source(id), fadeMs: fadeMs, ticket: ticket))
        case let .switchTo(id, crossfadeMs, ticket):
            guard let s = source(id) else {
                sent = engine.send(.play(nil, fadeMs: crossfadeMs, ticket: ticket))
                break
            }
            sent = engine.send(.switchTo(s, crossfadeMs: crossfadeMs, ticket: ticket))
        case let .pause(fadeMs, ticket):
            sent = engine.send(.pause(fadeMs: fadeMs, ticket: ticket))
        case .setLevel(let level):
            sent = engine.send(.setGain(VolumeCurve.gain(level: level), rampMs: Self.levelRampMs))
        case let .setMixerLevel(level, ticket):
            // The ticket's answer, dispatched after this action's effects.
            switch setMixerLevel(level) {
            case .success: followUps.append(.engine(.levelSet(ticket: ticket), at: now()))
            case .failure(let failure):
                followUps.append(.engine(.levelFailed(ticket: ticket, reason: failure.reason, actual: failure.actual), at: now()))
            }
            sent = true
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
                dispatch(.engine(.underruns(total: total), at: now()))
            case .realtimeScheduling:
                break  // logged by the engine
            case .retired(let source):
                if let file = source as? FileSound, file.starvedFrames > 0 {
                    logger.warning("sounds: read-ahead fell behind for \(file.path): \(file.starvedFrames) frames played as silence")
                }
                // Released here, on the main thread, as the report goes out of scope.
            }
        }
    }
}
