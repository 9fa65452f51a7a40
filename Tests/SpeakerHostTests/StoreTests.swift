// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerCore
import SpeakerSystem
import SpeakerHost

/// The state and revision files behind the persistence service's ports, on
/// real files in a temporary directory.
@Suite struct StoreTests {
    final class Directory {
        let path: String
        init() throws {
            var template = Array("/tmp/speaker-host-XXXXXX".utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!).map { String(cString: $0) } }) else {
                throw SystemError(operation: "mkdtemp", errno: errno)
            }
            path = made
        }
        deinit {
            for name in (try? FileIO.names(in: path)) ?? [] { unlink(path + "/" + name) }
            rmdir(path)
        }
    }

    private let logger = Logger(component: "state", threshold: .debug, backend: MemoryLogBackend())

    @Test func theStateSavedIsTheStateLoadedAndInterruptedWritesAreRemoved() throws {
        let directory = try Directory()
        let store = StateStore(directory: directory.path, logger: logger)
        #expect(store.load() == nil, "a fresh device has no state")
        let state = PersistedState(soundID: "rain", level: 0.4, intendsPlayback: true)
        store.save(state)
        try FileIO.writeAtomically(path: directory.path + "/.state.json.tmp-dead", text: "{")
        #expect(StateStore(directory: directory.path, logger: logger).load() == state)
        #expect(try FileIO.names(in: directory.path) == ["state.json"], "the interrupted write is gone")
    }

    @Test func aRevisionReservationIsReadStrictly() throws {
        let directory = try Directory()
        let fresh = RevisionStore(directory: directory.path, logger: logger)
        #expect(fresh.counter.unavailableReason == nil, "a missing file starts at 0")
        #expect(fresh.reserve(through: 1_000) == nil)
        #expect(try FileIO.readText(path: directory.path + "/revision", maxBytes: 64) == "1000\n")
        try FileIO.writeAtomically(path: directory.path + "/revision", text: "12x\n")
        let garbled = RevisionStore(directory: directory.path, logger: logger)
        #expect(garbled.counter.unavailableReason?.contains("does not hold a revision number") == true)
        for text in [" 1000\n", "1000 \n", "1000\n\n", "+1000\n", "\n"] {
            try FileIO.writeAtomically(path: directory.path + "/revision", text: text)
            #expect(RevisionStore(directory: directory.path, logger: logger).counter.unavailableReason != nil, "\(text.debugDescription)")
        }
    }

    /// A reservation without its newline is a torn write: refused, and the
    /// counter continues above the previous reservation (kept before each new
    /// one is written), above which nothing was ever published; without a
    /// previous one, nothing is handed out.
    @Test func aTornReservationFallsBackAboveThePreviousOne() throws {
        let directory = try Directory()
        let store = RevisionStore(directory: directory.path, logger: logger)
        #expect(store.reserve(through: 1_000) == nil && store.reserve(through: 2_000) == nil)
        #expect(try FileIO.readText(path: directory.path + "/revision.previous", maxBytes: 64) == "1000\n")
        #expect(try FileIO.readText(path: directory.path + "/revision", maxBytes: 64) == "2000\n")
        let epoch = store.counter.epoch
        // The write of 3000 torn after "3": 2000 was confirmed, 3000 never was.
        try FileIO.writeAtomically(path: directory.path + "/revision.previous", text: "2000\n")
        try FileIO.writeAtomically(path: directory.path + "/revision", text: "3")
        let torn = RevisionStore(directory: directory.path, logger: logger)
        #expect(torn.counter.unavailableReason == nil && torn.counter.current == 2_000 && torn.counter.epoch == epoch)
        try FileIO.writeAtomically(path: directory.path + "/revision", text: "")
        #expect(RevisionStore(directory: directory.path, logger: logger).counter.current == 2_000, "torn before the first digit")
        unlink(directory.path + "/revision.previous")
        try FileIO.writeAtomically(path: directory.path + "/revision", text: "30")
        let lost = RevisionStore(directory: directory.path, logger: logger)
        #expect(lost.counter.unavailableReason?.contains("without its newline") == true, "\(lost.counter)")
    }

    /// Every store removes the temporaries of its interrupted writes at start
    /// (the daemon's: the revision store at init, state and mixes when told),
    /// and nothing else.
    @Test func everyStoreRemovesItsInterruptedWrites() throws {
        let directory = try Directory()
        let leftovers = [".revision.tmp-1-a", ".revision.previous.tmp-1-b", ".epoch.tmp-1-c", ".state.json.tmp-1-d",
                         ".mixes.json.tmp-1-e"]
        for name in leftovers + ["keep.tmp-1", ".other.tmp-1-f"] { try FileIO.writeAtomically(path: directory.path + "/" + name, text: "x") }
        _ = RevisionStore(directory: directory.path, logger: logger)
        _ = StateStore(directory: directory.path, logger: logger).load()
        MixStore(directory: directory.path, logger: logger).removeInterruptedWrites()
        let left = try FileIO.names(in: directory.path).filter { $0 != "epoch" }.sorted()
        #expect(left == [".other.tmp-1-f", "keep.tmp-1"], "\(left)")
    }

    /// The epoch changes exactly when the counter starts over: a new state
    /// directory, or one that lost its `revision` file; a restart with the
    /// reservation keeps it. A directory from before epochs gets one.
    @Test func theEpochChangesExactlyWhenTheCounterStartsOver() throws {
        let directory = try Directory()
        let epochPath = directory.path + "/epoch"
        let first = RevisionStore(directory: directory.path, logger: logger)
        let epoch = first.counter.epoch
        #expect(epoch.utf8.count == 16 && epoch.utf8.allSatisfy { ("0"..."9").contains(Character(UnicodeScalar($0))) ||
                                                                    ("a"..."f").contains(Character(UnicodeScalar($0))) }, "\(epoch)")
        #expect(try FileIO.readText(path: epochPath) == epoch + "\n", "kept before any revision is reserved")
        #expect(first.reserve(through: 1_000) == nil)

        let restarted = RevisionStore(directory: directory.path, logger: logger)
        #expect(restarted.counter.epoch == epoch && restarted.counter.current == 1_000)

        unlink(directory.path + "/revision")
        let lost = RevisionStore(directory: directory.path, logger: logger)
        #expect(lost.counter.current == 0 && lost.counter.epoch != epoch, "the counter starts over: a new epoch")
        #expect(try FileIO.readText(path: epochPath) == lost.counter.epoch + "\n")

        #expect(lost.reserve(through: 1_000) == nil)
        unlink(epochPath)
        let upgraded = RevisionStore(directory: directory.path, logger: logger)
        #expect(upgraded.counter.current == 1_000 && upgraded.counter.epoch != lost.counter.epoch)
        try FileIO.writeAtomically(path: epochPath, text: "not an \"epoch\"\n")
        let damaged = RevisionStore(directory: directory.path, logger: logger)
        #expect(damaged.counter.epoch != upgraded.counter.epoch && damaged.counter.epoch.utf8.count == 16)
    }
}
