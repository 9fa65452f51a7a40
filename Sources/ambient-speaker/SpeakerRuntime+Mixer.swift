import SpeakerCore
import SpeakerSystem
import AudioALSA

/// `volume.mode: "alsa-mixer"`: the level drives a mixer element by dB, and
/// a change made elsewhere (alsamixer, another program) is read back through
/// the mixer's poll descriptors in the main loop and handed to the core,
/// which publishes it. The software gain stays at unity in this mode.
extension SpeakerRuntime {
    /// Opens `volume.mixer.{card, element}` and watches it. A mixer that
    /// can't be opened is a start-up failure (exit 2) naming card and element.
    func startMixer() throws {
        let card = config.volume.mixer.card, element = config.volume.mixer.element
        let mixer: ALSAMixer
        do {
            mixer = try ALSAMixer(card: card, element: element)
        } catch {
            throw StartupError(exitCode: 2, message: "volume.mixer: \(error); `ambient-speaker devices` lists the elements")
        }
        audioParts.mixer = mixer
        audioParts.mixerMap = MixerLevelMap(minDB: mixer.minDB, maxDB: mixer.maxDB)
        logger.info("volume: mixer \"\(card)\" element \"\(element)\", \(mixer.minDB)…\(mixer.maxDB) dB\(mixer.hasSwitch ? ", switch mutes level 0" : "")")
        for pfd in mixer.pollDescriptors {
            audioParts.mixerWatches.append(loop.addReader(fd: pfd.fd) { [unowned self] in self.mixerChanged() })
        }
        engine.send(.setGain(1, rampMs: 0))
    }

    /// Why a mixer write failed, and the level the element holds afterwards.
    struct MixerWriteFailure: Error {
        var reason: String
        var actual: Double?
    }

    /// Writes `level` to the mixer element; on failure says why and reads
    /// back what the element holds (the truth the core then publishes).
    func setMixerLevel(_ level: Double) -> Result<Void, MixerWriteFailure> {
        guard let mixer = audioParts.mixer, let map = audioParts.mixerMap else {
            return .failure(MixerWriteFailure(reason: "the mixer is not open", actual: nil))
        }
        do {
            try mixer.write(db: map.db(level: level))
            mixer.handleEvents()
            audioParts.mixerWrittenDB = .some(mixer.readDB())
            return .success(())
        } catch {
            mixer.handleEvents()
            let current = mixer.readDB()
            audioParts.mixerWrittenDB = .some(current)
            return .failure(MixerWriteFailure(reason: "\(error)", actual: map.level(db: current)))
        }
    }

    /// A mixer descriptor is readable: take the events; if the element now
    /// differs from what the speaker wrote, someone else moved it.
    func mixerChanged() {
        guard let mixer = audioParts.mixer, let map = audioParts.mixerMap else { return }
        if mixer.handleEvents() < 0 {
            logger.error("volume: the mixer \(mixer.card) went away; its changes are no longer read back")
            for watch in audioParts.mixerWatches { loop.remove(watch) }
            audioParts.mixerWatches = []
            return
        }
        let current = mixer.readDB()
        if let written = audioParts.mixerWrittenDB, Self.sameDB(written, current) { return }
        audioParts.mixerWrittenDB = .some(current)
        let level = map.level(db: current)
        logger.info("volume: mixer moved elsewhere to \(current.map { "\($0) dB" } ?? "mute") (level \(level))")
        dispatch(.engine(.levelChangedOutside(level: level), at: now()))
    }

    private static func sameDB(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x?, y?): return abs(x - y) < 0.005
        default: return false
        }
    }
}
