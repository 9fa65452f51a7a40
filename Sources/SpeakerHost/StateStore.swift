// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerPorts

/// Keeps the persisted state (`PersistedState`: last sound, level, playback
/// intent) in `{stateDirectory}/state.json`. Each write is atomic
/// (`FileIO.writeAtomically`: temporary file, fsync, rename, fsync of the
/// directory), so after a crash or power cut the file holds either the old
/// or the new state. The core decides *when* to write (`StateSaveSchedule`).
/// Main thread only.
public final class StateStore: StateStorage {
    static let fileName = "state.json"
    let directory: String
    let path: String
    let logger: Logger

    public init(directory: String, logger: Logger) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        self.logger = logger
    }

    /// Logs where the state lives and how often it may be written (once, at start).
    public func logConfiguration(resumeOnBoot: Bool) {
        logger.info("state file \(path): written at most every \(StateSaveSchedule.minIntervalMs) ms, "
                    + "\(StateSaveSchedule.settleMs) ms after a change; session.resumeOnBoot \(resumeOnBoot)")
    }

    /// The saved state, or nil (with a warning) when the file is missing or
    /// unusable; the speaker then starts from the configured defaults. Also
    /// removes temporary files a crash mid-write left behind.
    public func load() -> PersistedState? {
        removeStaleTemporaries()
        let bytes: [UInt8]
        do {
            bytes = try FileIO.read(path: path, maxBytes: 65_536, followSymlinks: false)
        } catch {
            if error.errno == ENOENT {
                logger.warning("no saved state at \(path); starting from defaults")
            } else {
                logger.warning("cannot read the saved state \(path) (\(error.message)); starting from defaults")
            }
            return nil
        }
        do {
            return try PersistedState.decode(bytes)
        } catch {
            logger.warning("saved state \(path) is unusable (\(error.reason)); starting from defaults")
            return nil
        }
    }

    /// Writes `state` atomically; a failure is logged (the next change retries).
    public func save(_ state: PersistedState) {
        do {
            try FileIO.writeAtomically(path: path, bytes: state.fileBytes)
            logger.debug("saved \(state.summary)")
        } catch {
            logger.error("cannot save the state to \(path): \(error.message)")
        }
    }

    /// Deletes `.state.json.tmp-*` files: the remains of writes cut short by
    /// a crash or power cut (the rename never happened, so they hold nothing
    /// that was ever the state).
    private func removeStaleTemporaries() {
        InterruptedWrites.remove(in: directory, for: [Self.fileName]).log(to: logger)
    }
}

extension InterruptedWrites.Outcome {
    /// One notice per temporary removed, one warning per one that could not be.
    func log(to logger: Logger) {
        for name in removed { logger.notice("removed \(name), left by an interrupted write") }
        for (name, error) in failed { logger.warning("cannot remove \(name), left by an interrupted write: \(error)") }
    }
}
