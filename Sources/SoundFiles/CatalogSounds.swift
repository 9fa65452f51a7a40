// SPDX-License-Identifier: Apache-2.0
import Ambience
import SpeakerSystem
import SpeakerPorts

/// The audio port's sound library: the catalog's sounds made into sources,
/// file sounds read ahead by the streamer (without one they decode on the
/// audio thread). Loop thread only.
public final class CatalogSounds: SoundLibrary {
    public let catalog: SoundCatalog
    private let streamer: FileStreamer?
    private let logger: Logger

    public init(catalog: SoundCatalog, streamer: FileStreamer?, logger: Logger) {
        self.catalog = catalog
        self.streamer = streamer
        self.logger = logger
    }

    public func start() {
        do {
            try streamer?.start()
        } catch {
            logger.error("sounds: read-ahead thread did not start (\(error)); file sounds decode on the audio thread")
        }
    }

    public func source(id: String, sampleRate: Int) -> Result<any SoundSource, SoundUnavailable> {
        guard let sound = catalog.sound(id: id) else {
            return .failure(SoundUnavailable(reason: "is in the catalog but has no source"))
        }
        do {
            return .success(try SoundCatalog.makeSource(sound, sampleRate: sampleRate, streamer: streamer))
        } catch {
            return .failure(SoundUnavailable(reason: "cannot be played: \(error)"))
        }
    }

    public func retired(_ source: any SoundSource) {
        if let file = source as? FileSound, file.starvedFrames > 0 {
            logger.warning("sounds: read-ahead fell behind for \(file.path): \(file.starvedFrames) frames played as silence")
        }
    }

    public func shutdown() { streamer?.shutdown() }
}
