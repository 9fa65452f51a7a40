// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerPorts

/// Keeps the command journal (`CommandJournal`) in
/// `{stateDirectory}/commands.json`. Each write is atomic and durable
/// (`FileIO.writeAtomically`: temporary file, fsync, rename, fsync of the
/// directory) and finishes before `save` returns: the core has put the
/// acknowledgements and results that depend on it after it. A journal that
/// cannot be used — truncated, corrupt, another device's, another release's
/// — is renamed `commands.json.unusable` with one warning, and the speaker
/// starts without it: nothing in it is applied. Main thread only.
///
/// The environment variable `AMBIENT_SPEAKER_COMMAND_JOURNAL=off` turns the
/// journal off (nothing is read or written): the end-to-end tests show with
/// it what the journal prevents.
public final class CommandJournalStore: CommandJournalStorage {
    static let fileName = "commands.json"
    static let asideName = "commands.json.unusable"
    let directory: String
    let path: String
    let deviceID: String
    let logger: Logger
    /// False with `AMBIENT_SPEAKER_COMMAND_JOURNAL=off`.
    public let enabled: Bool
    /// The last write failed (logged once until one succeeds again).
    private var failing = false

    public init(directory: String, deviceID: String, logger: Logger, enabled: Bool = CommandJournalStore.enabledByEnvironment) {
        self.directory = directory
        path = directory + "/" + Self.fileName
        self.deviceID = deviceID
        self.logger = logger
        self.enabled = enabled
    }

    /// False when `AMBIENT_SPEAKER_COMMAND_JOURNAL` is `off`.
    public static var enabledByEnvironment: Bool {
        guard let value = getenv("AMBIENT_SPEAKER_COMMAND_JOURNAL") else { return true }
        return String(cString: value) != "off"
    }

    /// The journal the last process left, or nil: none (a first start, or a
    /// clean stop with nothing held), or unusable (set aside, logged). Also
    /// removes temporaries a crash mid-write left behind.
    public func load() -> CommandJournal? {
        guard enabled else {
            logger.warning("command journal off (AMBIENT_SPEAKER_COMMAND_JOURNAL=off): a command held at a stop or crash is lost")
            return nil
        }
        InterruptedWrites.remove(in: directory, for: [Self.fileName]).log(to: logger)
        let bytes: [UInt8]
        do {
            bytes = try FileIO.read(path: path, maxBytes: CommandJournal.maxFileBytes, followSymlinks: false)
        } catch {
            if error.errno == ENOENT { return nil }
            setAside("cannot be read (\(error.message))")
            return nil
        }
        do {
            let journal = try CommandJournal.decode(bytes, deviceID: deviceID)
            logger.info("command journal \(path): \(journal.held.count) held, \(journal.answered.count) results kept")
            return journal
        } catch {
            setAside("is unusable (\(error.reason))")
            return nil
        }
    }

    /// Renames the file out of the way, so it never blocks a start again and
    /// stays there to be looked at.
    private func setAside(_ why: String) {
        let aside = directory + "/" + Self.asideName
        if rename(path, aside) == 0 {
            logger.warning("command journal \(path) \(why); set aside as \(aside), its commands are not applied")
        } else {
            let reason = String(cString: strerror(errno))
            logger.warning("command journal \(path) \(why); its commands are not applied (cannot set it aside: \(reason))")
        }
    }

    public func save(_ journal: CommandJournal) {
        guard enabled else { return }
        do {
            try FileIO.writeAtomically(path: path, bytes: journal.fileBytes)
            if failing { logger.notice("command journal written again") }
            failing = false
        } catch {
            if !failing { logger.error("cannot write the command journal \(path): \(error.message)") }
            failing = true
        }
    }
}
