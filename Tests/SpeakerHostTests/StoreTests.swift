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
            guard let made = mkdtemp(&template) else { throw SystemError(operation: "mkdtemp", errno: errno) }
            path = String(cString: made)
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
    }
}
