import SpeakerSystem

/// Keeps the session revision reservation (see `RevisionCounter`) in
/// `{stateDirectory}/revision`, written atomically, once per block of revisions.
final class RevisionStore {
    let path: String
    let logger: Logger
    /// The reservation found at start (0 when there is none).
    let lastReservation: UInt64

    init(directory: String, logger: Logger) {
        path = directory + "/revision"
        self.logger = logger
        if let text = try? FileIO.readText(path: path, maxBytes: 64),
           let value = UInt64(text.trimmingCharacters(in: " \n")) {
            lastReservation = value
        } else {
            lastReservation = 0
            if SystemFacts.isDirectory(path: directory) {
                logger.info("no revision reservation at \(path); starting at 0")
            }
        }
        if !SystemFacts.isDirectory(path: directory) {
            do { try SystemFacts.makeDirectories(path: directory, mode: 0o755) } catch {
                logger.error("stateDirectory \(directory) cannot be created (\(error)); revisions will restart after a reboot")
            }
        }
    }

    /// Durably records the reservation (atomic write with fsync) before it is used.
    func reserve(through: UInt64) {
        do { try FileIO.writeAtomically(path: path, text: "\(through)\n") } catch {
            logger.error("cannot save the revision reservation to \(path): \(error)")
        }
    }
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
