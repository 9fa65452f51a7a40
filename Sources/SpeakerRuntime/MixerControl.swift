import SpeakerSystem
import AudioALSA

/// `volume.mode: "alsa-mixer"`: the level drives a mixer element by dB; the
/// element is read back after each write and whenever its poll descriptors
/// say it changed, and every reading goes to the core, which decides whether
/// it was a change made elsewhere (alsamixer, another program).
/// Opened by ``AudioService``. Loop thread only.
final class MixerControl {
    /// Why a mixer write failed, and the level the element holds afterwards.
    struct WriteFailure: Error {
        var reason: String
        var actual: Double?
    }

    /// What the element holds: dB (nil = muted) and the level it maps to.
    struct Reading {
        var db: Double?
        var level: Double
    }

    private let mixer: ALSAMixer
    private let map: MixerLevelMap
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let changed: (Reading) -> Void
    private var watches: [LoopRegistration] = []

    /// Opens `card`/`element` and watches it; `changed` gets each reading
    /// taken when the element signals a change.
    init(card: String, element: String, loop: any EventLoopProtocol, logger: Logger,
         changed: @escaping (Reading) -> Void) throws(ALSAError) {
        mixer = try ALSAMixer(card: card, element: element)
        map = MixerLevelMap(minDB: mixer.minDB, maxDB: mixer.maxDB)
        self.loop = loop
        self.logger = logger
        self.changed = changed
        logger.info("volume: mixer \"\(card)\" element \"\(element)\", \(mixer.minDB)…\(mixer.maxDB) dB\(mixer.hasSwitch ? ", switch mutes level 0" : "")")
        for pfd in mixer.pollDescriptors {
            watches.append(loop.addReader(fd: pfd.fd) { [unowned self] in self.readable() })
        }
    }

    /// Writes `level` to the element; on failure says why. Either way the
    /// reading afterwards (the truth the core then publishes).
    func write(level: Double) -> (Result<Void, WriteFailure>, Reading) {
        do {
            try mixer.write(db: map.db(level: level))
            mixer.handleEvents()
            return (.success(()), reading())
        } catch {
            mixer.handleEvents()
            let now = reading()
            return (.failure(WriteFailure(reason: "\(error)", actual: now.level)), now)
        }
    }

    private func reading() -> Reading {
        let db = mixer.readDB()
        return Reading(db: db, level: map.level(db: db))
    }

    /// Stops watching the element.
    func close() {
        for watch in watches { loop.remove(watch) }
        watches = []
    }

    /// A mixer descriptor is readable: take the events and report the reading.
    private func readable() {
        if mixer.handleEvents() < 0 {
            logger.error("volume: the mixer \(mixer.card) went away; its changes are no longer read back")
            close()
            return
        }
        changed(reading())
    }
}
