// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import Ambience
import AudioALSA
import MQTTLink
import SoundFiles
import SpeakerRuntime

/// The live adapters `main` builds the services from: each reads the
/// configuration and the system once, at start-up.
enum LiveParts {
    /// Blocks the signals the loop handles through signalfd. Must run before
    /// any thread (audio, MQTT) starts, so every thread inherits the mask.
    static func blockSignals() throws(SystemError) {
        try EventLoop.blockSignals([SIGTERM, SIGINT, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
    }

    /// The core's live environment: the wall clock, NTP sync (re-read at
    /// most once a second: ``ClockSyncStatus``, so a command's `session`
    /// costs no `clock_adjtime`), random session ids.
    /// With the simulated board's clock, its time and sync flag instead of the host's.
    static func environment(software: String, simulatedClock: SimulatedWallClock? = nil) -> SpeakerEnvironment {
        let clock = ClockSyncStatus()
        return SpeakerEnvironment(
            wallClock: {
                let now = simulatedClock?.now() ?? WallClock.now()
                return WallClockReading(seconds: now.seconds, milliseconds: Int(now.nanoseconds / 1_000_000))
            },
            clockSynced: { simulatedClock?.synced(host: clock.isSynchronised()) ?? clock.isSynchronised() },
            newSessionID: { UUIDText.random() },
            software: software)
    }

    /// Scans the sounds directory once, logging each skipped file once (with its reason).
    static func catalog(config: SpeakerConfig, logger: Logger) -> SoundCatalog {
        let log = logger.named("sounds")
        let catalog = SoundCatalog.load(directory: config.audio.soundsDirectory)
        if let problem = catalog.directoryProblem { log.notice("no file sounds: \(problem)") }
        for skipped in catalog.skipped { log.warning("skipping \(skipped.path): \(skipped.reason)") }
        for note in catalog.notes { log.warning(note) }
        let files = catalog.sounds.count - BuiltInSounds.all.count
        log.info("catalog: \(catalog.sounds.count) sounds (\(BuiltInSounds.all.count) built-in, \(files) from \(config.audio.soundsDirectory)), \(catalog.skipped.count) skipped")
        return catalog
    }

    /// The catalog's image files as read, for the core to take or refuse.
    static func artwork(catalog: SoundCatalog, config: SpeakerConfig) -> [ArtworkFile] {
        ArtworkFiles.find(for: catalog, artworkDirectory: config.audio.artworkDirectory).map { found in
            switch found.bytes {
            case .success(let bytes): return ArtworkFile(soundID: found.soundID, path: found.path, contents: .bytes(bytes))
            case .failure(let failure): return ArtworkFile(soundID: found.soundID, path: found.path, contents: .unreadable(failure.reason))
            }
        }
    }

    /// The sounds the audio service plays: the catalog, with the read-ahead thread for file sounds.
    static func sounds(catalog: SoundCatalog, config: SpeakerConfig, logger: Logger) -> CatalogSounds {
        CatalogSounds(catalog: catalog, streamer: streamer(config: config, logger: logger), logger: logger)
    }

    /// The read-ahead thread for file sounds (nil: file sounds decode on the audio thread).
    private static func streamer(config: SpeakerConfig, logger: Logger) -> FileStreamer? {
        do {
            return try FileStreamer(logger: logger.named("sounds"), loopMemoryBytes: config.audio.loopMemoryKB * 1024)
        } catch {
            logger.named("sounds").error("no read-ahead thread (\(error)); file sounds decode on the audio thread")
            return nil
        }
    }

    /// The ALSA engine; the demo writes to a WAV file when there is no sound card.
    static func engine(config: SpeakerConfig, logger: Logger, demo: Bool) -> AudioEngine {
        AudioDevices.silenceLibraryMessages()
        var settings = AudioEngine.Settings(device: config.audio.device, sampleRate: config.audio.sampleRate,
                                            periodFrames: config.audio.periodFrames, bufferFrames: config.audio.bufferFrames,
                                            rewindMarginFrames: config.audio.rewindMarginFrames)
        if demo && config.audio.device == "default" && !AudioDevices.canOpen(device: "default") {
            settings.device = "file:'ambient-demo.wav',wav"
            logger.notice("no sound card: the demo writes its audio to ambient-demo.wav")
        }
        return AudioEngine(settings: settings, logger: logger.named("audio"))
    }

    /// The MQTT link from the config: the stable client id, credentials (the
    /// password read from `passwordFile`, first line, never logged), TLS,
    /// the will, and the subscriptions (`command`, plus Home Assistant's
    /// status topic — even with discovery off, since a reload can turn it on).
    static func mqttLink(config: SpeakerConfig, logger: Logger) throws(StartupError) -> MQTTLink {
        let topics = SpeakerTopics(root: config.topicRoot)
        var password: String?
        if let file = config.mqtt.passwordFile {
            do {
                password = try FileIO.readText(path: file, maxBytes: 4096).split(separator: "\n").first.map(String.init) ?? ""
            } catch {
                throw StartupError(exitCode: 1, message: "mqtt.passwordFile: cannot read \(file): \(error.message)")
            }
        }
        let settings = MQTTSettings(
            host: config.mqtt.host, port: config.mqtt.port, clientID: "ambient-speaker-\(config.device.id)",
            keepaliveSeconds: config.mqtt.keepaliveSeconds, username: config.mqtt.username, password: password,
            tls: config.mqtt.tls.map { MQTTTLS(caFile: $0.caFile, certFile: $0.certFile, keyFile: $0.keyFile) },
            will: MQTTWill(topic: topics.availability, payload: SpeakerTopics.offline, qos: 1, retain: true),
            subscriptions: [topics.command, HomeAssistantDiscovery.statusTopic(config),
                            // Its own retained session, to recognise a twin with the same device id (BrokerHealth).
                            topics.session])
        do {
            return try MQTTLink(settings: settings, logger: logger.named("mqtt"), clock: { MonotonicClock.now() })
        } catch {
            throw StartupError(exitCode: 2, message: "\(error)")
        }
    }
}

/// Random (version 4) UUIDs as text, for session ids.
public enum UUIDText {
    static func random() -> String {
        var b = randomBytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { byte -> String in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }
}
