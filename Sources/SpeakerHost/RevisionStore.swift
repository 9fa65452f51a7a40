// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import SpeakerCore
import SpeakerSystem
import SpeakerPorts

/// Keeps the session revision reservation (see `RevisionCounter`) in
/// `{stateDirectory}/revision`, written atomically, once per block of
/// revisions. Main thread only.
///
/// Reading is strict, because a wrong base would repeat revisions: a missing
/// file is a fresh device (start at 0); anything else that is not one decimal
/// `UInt64` on a line — unreadable, not a regular file (refused without
/// blocking), a symbolic link, over 64 bytes, garbage, out of range — gives a
/// counter that hands out nothing (`RevisionCounter(unreadableReservation:)`):
/// the core then withholds `session` and says why.
public final class RevisionStore: RevisionStorage {
    static let fileName = "revision"
    let path: String
    let logger: Logger
    /// The counter to start from.
    public let counter: RevisionCounter

    public init(directory: String, logger: Logger) {
        path = directory + "/" + Self.fileName
        self.logger = logger
        if !SystemFacts.isDirectory(path: directory) {
            do { try SystemFacts.makeDirectories(path: directory, mode: 0o755) } catch {
                logger.error("stateDirectory \(directory) cannot be created (\(error))")
            }
        }
        counter = Self.load(path: path, logger: logger)
    }

    private static func load(path: String, logger: Logger) -> RevisionCounter {
        let text: String
        do {
            text = try FileIO.readText(path: path, maxBytes: 64, followSymlinks: false)
        } catch {
            if error.errno == ENOENT {
                logger.info("no revision reservation at \(path); starting at 0")
                return RevisionCounter(persistedReservation: 0)
            }
            return RevisionCounter(unreadableReservation: "\(error) — put a number above every revision ever published "
                                   + "(e.g. the broker's retained session revision + 1000) in \(path)")
        }
        let trimmed = text.trimmingCharacters(in: " \n")
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let value = UInt64(trimmed) else {
            return RevisionCounter(unreadableReservation: "\(path) does not hold a revision number (0…\(UInt64.max)) "
                                   + "— put a number above every revision ever published in it")
        }
        logger.info("revisions continue above \(value) (reserved in \(path))")
        return RevisionCounter(persistedReservation: value)
    }

    /// Durably records the reservation (atomic write with fsync) before it is
    /// used; returns nil when it is on disk, else the reason it is not.
    public func reserve(through: UInt64) -> String? {
        do {
            try FileIO.writeAtomically(path: path, text: "\(through)\n")
            logger.debug("revisions reserved through \(through)")
            return nil
        } catch {
            return "\(error)"
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
