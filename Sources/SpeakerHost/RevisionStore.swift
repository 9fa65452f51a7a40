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
/// `UInt64` on a line ending in a newline — unreadable, not a regular file
/// (refused without blocking), a symbolic link, over 64 bytes, garbage, out
/// of range — gives a counter that hands out nothing
/// (`RevisionCounter(unreadableReservation:)`): the core then withholds
/// `session` and says why.
///
/// A torn write (digits without their newline: a file system that lost the
/// end of the write in a power cut despite the rename) is refused too, but
/// it has a safe fallback: before each new reservation the confirmed one is
/// kept in `{stateDirectory}/revision.previous` (written and synced first).
/// A reservation whose write was torn was never confirmed, so no revision
/// above the previous one was published: the counter continues above
/// `revision.previous`. Without a readable previous one, `session` is withheld.
///
/// Beside it, `{stateDirectory}/epoch` holds the counter's epoch
/// (`RevisionCounter.epoch`): a new random id whenever the counter starts
/// over (no `revision` file), written before any revision is reserved, and
/// read back otherwise. A missing or unreadable `epoch` beside a readable
/// reservation (a state directory from before epochs, or a damaged file) is
/// replaced by a new id; the counter did not start over, so readers reset a
/// watermark they did not need to, which costs nothing.
public final class RevisionStore: RevisionStorage {
    static let fileName = "revision"
    static let epochFileName = "epoch"
    static let previousFileName = "revision.previous"
    let path: String
    let previousPath: String
    /// The reservation on disk (the one ``reserve(through:)`` keeps as the previous one).
    private var confirmed: UInt64?
    let logger: Logger
    /// The counter to start from.
    public let counter: RevisionCounter

    public init(directory: String, logger: Logger) {
        path = directory + "/" + Self.fileName
        previousPath = directory + "/" + Self.previousFileName
        self.logger = logger
        if !SystemFacts.isDirectory(path: directory) {
            do { try SystemFacts.makeDirectories(path: directory, mode: 0o755) } catch {
                logger.error("stateDirectory \(directory) cannot be created (\(error))")
            }
        }
        InterruptedWrites.remove(in: directory, for: [Self.fileName, Self.previousFileName, Self.epochFileName]).log(to: logger)
        counter = Self.load(path: path, previousPath: previousPath, epochPath: directory + "/" + Self.epochFileName, logger: logger)
        if counter.unavailableReason == nil { confirmed = counter.reservedThrough }
    }

    /// One reservation as written: decimal digits and a newline, nothing else.
    static func parse(_ text: String) -> UInt64? {
        guard text.utf8.last == UInt8(ascii: "\n") else { return nil }
        let digits = text.utf8.dropLast()
        guard !digits.isEmpty, digits.count <= 20, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }

    /// Whether `text` is digits cut short before their newline (a torn write).
    static func isTorn(_ text: String) -> Bool {
        text.utf8.last != UInt8(ascii: "\n") && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    private static func load(path: String, previousPath: String, epochPath: String, logger: Logger) -> RevisionCounter {
        let text: String
        do {
            text = try FileIO.readText(path: path, maxBytes: 64, followSymlinks: false)
        } catch {
            if error.errno == ENOENT {
                let epoch = newEpoch(path: epochPath, logger: logger)
                logger.info("no revision reservation at \(path); starting at 0 in epoch \(epoch)")
                return RevisionCounter(persistedReservation: 0, epoch: epoch)
            }
            return RevisionCounter(unreadableReservation: "\(error) — put a number above every revision ever published "
                                   + "(e.g. the broker's retained session revision + 1000) in \(path)",
                                   epoch: storedEpoch(path: epochPath, logger: logger))
        }
        if isTorn(text) {
            let previous = try? FileIO.readText(path: previousPath, maxBytes: 64, followSymlinks: false)
            if let previous, let value = parse(previous) {
                let epoch = storedEpoch(path: epochPath, logger: logger)
                logger.warning("\(path) holds \"\(text)\" without its newline, a write torn by a power cut: refused; "
                               + "that reservation was never confirmed, so revisions continue above the previous one, "
                               + "\(value) (\(previousPath)), epoch \(epoch)")
                return RevisionCounter(persistedReservation: value, epoch: epoch)
            }
            return RevisionCounter(unreadableReservation: "\(path) holds \"\(text)\" without its newline (a torn write) and "
                                   + "\(previousPath) holds no reservation either — put a number above every revision ever "
                                   + "published, and a newline, in \(path)",
                                   epoch: storedEpoch(path: epochPath, logger: logger))
        }
        guard let value = parse(text) else {
            return RevisionCounter(unreadableReservation: "\(path) does not hold a revision number (0…\(UInt64.max)) "
                                   + "on a line — put a number above every revision ever published in it, and a newline",
                                   epoch: storedEpoch(path: epochPath, logger: logger))
        }
        let epoch = storedEpoch(path: epochPath, logger: logger)
        logger.info("revisions continue above \(value) (reserved in \(path)), epoch \(epoch)")
        return RevisionCounter(persistedReservation: value, epoch: epoch)
    }

    /// The epoch kept at `path`, or a new one (written there) when it is
    /// missing or not 1–64 of `0-9 a-z A-Z - _`.
    private static func storedEpoch(path: String, logger: Logger) -> String {
        do {
            let text = try FileIO.readText(path: path, maxBytes: 80, followSymlinks: false).trimmingCharacters(in: " \n")
            if (1...64).contains(text.utf8.count), text.utf8.allSatisfy(isEpochByte) { return text }
            logger.warning("\(path) does not hold an epoch (1–64 of 0-9 a-z A-Z - _); a new one replaces it")
        } catch {
            if error.errno != ENOENT { logger.warning("\(path): \(error); a new epoch replaces it") }
        }
        return newEpoch(path: path, logger: logger)
    }

    /// A new random epoch (64 bits, hex), written to `path` atomically. A
    /// failed write is logged and the epoch still used: the reservation that
    /// follows fails on the same disk, so no revision goes out in an epoch
    /// that the next start would not find.
    private static func newEpoch(path: String, logger: Logger) -> String {
        var random = SystemRandomNumberGenerator()
        let bits = random.next() as UInt64
        let hex = String(bits, radix: 16)
        let epoch = String(repeating: "0", count: 16 - hex.count) + hex
        do {
            try FileIO.writeAtomically(path: path, text: epoch + "\n")
        } catch {
            logger.warning("the new epoch \(epoch) cannot be kept in \(path): \(error)")
        }
        return epoch
    }

    private static func isEpochByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// Durably records the reservation (atomic write with fsync) before it is
    /// used, after keeping the confirmed one as the previous; returns nil when
    /// it is on disk, else the reason it is not.
    public func reserve(through: UInt64) -> String? {
        do {
            if let confirmed { try FileIO.writeAtomically(path: previousPath, text: "\(confirmed)\n") }
            try FileIO.writeAtomically(path: path, text: "\(through)\n")
            confirmed = through
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
