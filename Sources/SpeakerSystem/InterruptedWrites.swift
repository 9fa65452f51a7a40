// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// The remains of writes cut short by a crash or power cut: the temporary
/// files ``FileIO/writeAtomically(path:bytes:mode:)`` (`.NAME.tmp-*`) and the
/// settings applier (`.NAME.apply-*`) make beside a file before renaming them
/// over it. A temporary that is still there was never renamed, so it holds
/// nothing that was ever the file: every store removes its own at start.
public enum InterruptedWrites {
    /// What was removed and what could not be, for the log.
    public struct Outcome: Equatable, Sendable {
        public var removed: [String] = []
        public var failed: [(name: String, error: String)] = []
        public static func == (a: Outcome, b: Outcome) -> Bool {
            a.removed == b.removed && a.failed.map(\.name) == b.failed.map(\.name)
        }
    }

    /// Whether `entry` is a temporary of one of `names` (`.NAME.tmp-…` or `.NAME.apply-…`).
    public static func isTemporary(_ entry: String, of names: [String]) -> Bool {
        names.contains { entry.hasPrefix(".\($0).tmp-") || entry.hasPrefix(".\($0).apply-") }
    }

    /// Removes the temporaries of `names` in `directory` (a missing directory is nothing to do).
    public static func remove(in directory: String, for names: [String]) -> Outcome {
        var outcome = Outcome()
        let entries: [String]
        do { entries = try FileIO.names(in: directory) } catch {
            if error.errno != ENOENT { outcome.failed.append((directory, "\(error)")) }
            return outcome
        }
        for entry in entries.sorted() where isTemporary(entry, of: names) {
            do {
                try FileIO.remove(path: directory + "/" + entry)
                outcome.removed.append(entry)
            } catch {
                outcome.failed.append((entry, "\(error)"))
            }
        }
        return outcome
    }
}
