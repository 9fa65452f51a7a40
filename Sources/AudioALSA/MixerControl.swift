// SPDX-License-Identifier: Apache-2.0
import SpeakerSystem
import SpeakerPorts

/// `volume.mode: "alsa-mixer"`: the level drives a mixer element by dB; the
/// element is read back after each write and whenever its poll descriptors
/// say it changed, and every reading goes to the core, which decides whether
/// it was a change made elsewhere (alsamixer, another program). The audio
/// port's mixer element, opened by the audio service through
/// ``opener(card:element:loop:logger:)``. Loop thread only.
public final class MixerControl: MixerElement {
    private let mixer: ALSAMixer
    private let map: MixerLevelMap
    private let loop: any EventLoopProtocol
    private let logger: Logger
    private let changed: (MixerReading) -> Void
    private var watches: [LoopRegistration] = []

    /// Opens `card`/`element` and watches it; `changed` gets each reading
    /// taken when the element signals a change.
    public init(card: String, element: String, loop: any EventLoopProtocol, logger: Logger,
                changed: @escaping (MixerReading) -> Void) throws(ALSAError) {
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
    public func write(level: Double) -> (Result<Void, MixerWriteFailure>, MixerReading) {
        do {
            try mixer.write(db: map.db(level: level))
            mixer.handleEvents()
            return (.success(()), reading())
        } catch {
            mixer.handleEvents()
            let now = reading()
            return (.failure(MixerWriteFailure(reason: "\(error)", actual: now.level)), now)
        }
    }

    /// Opens `card`/`element` when the audio service starts (`alsa-mixer` mode).
    public static func opener(card: String, element: String, loop: any EventLoopProtocol, logger: Logger) -> MixerOpener {
        { changed throws(MixerError) in
            do {
                return try MixerControl(card: card, element: element, loop: loop, logger: logger, changed: changed)
            } catch {
                throw MixerError("\(error)")
            }
        }
    }

    private func reading() -> MixerReading {
        let db = mixer.readDB()
        return MixerReading(db: db, level: map.level(db: db))
    }

    /// Stops watching the element.
    public func close() {
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
