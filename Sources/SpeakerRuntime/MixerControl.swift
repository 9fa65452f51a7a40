import SpeakerSystem
import AudioALSA

/// `volume.mode: "alsa-mixer"`: the level drives a mixer element by dB, and
/// a change made elsewhere (alsamixer, another program) is read back through
/// the mixer's poll descriptors in the loop and reported as a level, which
/// the core then publishes. Opened by ``AudioService``. Loop thread only.
final class MixerControl {
    /// Why a mixer write failed, and the level the element holds afterwards.
    struct WriteFailure: Error {
        var reason: String
        var actual: Double?
    }

    private let mixer: ALSAMixer
    private let map: MixerLevelMap
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let changedOutside: (Double) -> Void
    /// What the speaker last wrote (nil = muted; outer nil = nothing yet), to
    /// tell its own change notifications from a change made elsewhere.
    private var writtenDB: Double??
    private var watches: [LoopRegistration] = []

    /// Opens `card`/`element` and watches it; `changedOutside` gets the level
    /// the element was moved to elsewhere.
    init(card: String, element: String, loop: any EventLoopProtocol, logger: Logger,
         changedOutside: @escaping (Double) -> Void) throws(ALSAError) {
        mixer = try ALSAMixer(card: card, element: element)
        map = MixerLevelMap(minDB: mixer.minDB, maxDB: mixer.maxDB)
        self.loop = loop
        self.logger = logger
        self.changedOutside = changedOutside
        logger.info("volume: mixer \"\(card)\" element \"\(element)\", \(mixer.minDB)…\(mixer.maxDB) dB\(mixer.hasSwitch ? ", switch mutes level 0" : "")")
        for pfd in mixer.pollDescriptors {
            watches.append(loop.addReader(fd: pfd.fd) { [unowned self] in self.changed() })
        }
    }

    /// Writes `level` to the element; on failure says why and reads back what
    /// the element holds (the truth the core then publishes).
    func write(level: Double) -> Result<Void, WriteFailure> {
        do {
            try mixer.write(db: map.db(level: level))
            mixer.handleEvents()
            writtenDB = .some(mixer.readDB())
            return .success(())
        } catch {
            mixer.handleEvents()
            let current = mixer.readDB()
            writtenDB = .some(current)
            return .failure(WriteFailure(reason: "\(error)", actual: map.level(db: current)))
        }
    }

    /// Stops watching the element.
    func close() {
        for watch in watches { loop.remove(watch) }
        watches = []
    }

    /// A mixer descriptor is readable: take the events; if the element now
    /// differs from what the speaker wrote, someone else moved it.
    private func changed() {
        if mixer.handleEvents() < 0 {
            logger.error("volume: the mixer \(mixer.card) went away; its changes are no longer read back")
            close()
            return
        }
        let current = mixer.readDB()
        if let written = writtenDB, Self.sameDB(written, current) { return }
        writtenDB = .some(current)
        let level = map.level(db: current)
        logger.info("volume: mixer moved elsewhere to \(current.map { "\($0) dB" } ?? "mute") (level \(level))")
        changedOutside(level)
    }

    private static func sameDB(_ a: Double?, _ b: Double?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case let (x?, y?): return abs(x - y) < 0.005
        default: return false
        }
    }
}
