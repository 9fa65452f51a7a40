// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerPorts

/// Keeps the mixes changed over MQTT (`SavedMixes`) in
/// `{stateDirectory}/mixes.json`, written atomically at each change (a mix is
/// saved rarely, and a saved mix must survive a power cut right after its
/// result). Main thread only.
public final class MixStore: MixStorage {
    static let fileName = "mixes.json"
    let directory: String
    let path: String
    let logger: Logger

    public init(directory: String, logger: Logger) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        self.logger = logger
    }

    /// The saved mixes, or nil when there are none (no file) or the file is
    /// unusable (logged; the config's mixes apply).
    public func load() -> SavedMixes? {
        let bytes: [UInt8]
        do {
            bytes = try FileIO.read(path: path, maxBytes: SavedMixes.maxFileBytes, followSymlinks: false)
        } catch {
            if error.errno != ENOENT {
                logger.warning("cannot read the saved mixes \(path) (\(error.message)); the config's mixes apply")
            }
            return nil
        }
        do {
            return try SavedMixes.decode(bytes)
        } catch {
            logger.warning("saved mixes \(path) are unusable (\(error.reason)); the config's mixes apply")
            return nil
        }
    }

    /// Removes the temporaries of writes a crash or power cut cut short; the
    /// daemon's start only (a command reading the mixes beside a running
    /// speaker must not take away the file it is writing).
    public func removeInterruptedWrites() {
        InterruptedWrites.remove(in: directory, for: [Self.fileName]).log(to: logger)
    }

    public func save(_ mixes: SavedMixes) {
        do {
            try FileIO.writeAtomically(path: path, bytes: mixes.fileBytes)
            logger.debug("saved \(mixes.mixes.count) mixes")
        } catch {
            logger.error("cannot save the mixes to \(path): \(error.message)")
        }
    }
}
