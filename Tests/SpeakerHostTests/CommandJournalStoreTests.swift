// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif
import Testing
import SpeakerCore
import SpeakerProtocol
import SpeakerSystem
import SpeakerHost

/// The command journal's file: what is saved is what loads, and a file that
/// cannot be used is set aside with one warning, never blocking a start.
@Suite struct CommandJournalStoreTests {
    let journal = CommandJournal(deviceID: "kitchen", held: [
        HeldCommand(id: "p1", payload: Array(#"{"id":"p1","action":"play"}"#.utf8), responseTopic: nil, correlationData: nil,
                    receivedAtMs: 1_795_953_600_000, applied: false)],
        answered: [.accepted(id: "v1", revision: 12, level: 0.5)])

    func store(_ directory: StoreTests.Directory, _ backend: MemoryLogBackend, device: String = "kitchen",
               enabled: Bool = true) -> CommandJournalStore {
        CommandJournalStore(directory: directory.path, deviceID: device,
                            logger: Logger(component: "state", threshold: .debug, backend: backend), enabled: enabled)
    }

    @Test func theJournalSavedIsTheJournalLoadedAndInterruptedWritesAreRemoved() throws {
        let directory = try StoreTests.Directory()
        let backend = MemoryLogBackend()
        #expect(store(directory, backend).load() == nil, "a fresh device has no journal")
        store(directory, backend).save(journal)
        try FileIO.writeAtomically(path: directory.path + "/.commands.json.tmp-dead", text: "{")
        #expect(store(directory, backend).load() == journal)
        #expect(try FileIO.names(in: directory.path) == ["commands.json"], "the interrupted write is gone")
    }

    @Test(arguments: [
        ("truncated", "{\"version\":1,\"device\":\"kit", "not valid JSON"),
        ("another device", nil, "written for device \"kitchen\", not \"bedroom\""),
        ("a newer release", "{\"version\":2,\"device\":\"kitchen\",\"held\":[],\"answered\":[]}", "version 2 is not 1"),
        ("binary garbage", "\u{0}\u{1}\u{2}", "not valid JSON"),
    ] as [(String, String?, String)])
    func anUnusableJournalIsSetAsideWithOneWarning(what: String, text: String?, reason: String) throws {
        let directory = try StoreTests.Directory()
        let backend = MemoryLogBackend()
        if let text {
            try FileIO.writeAtomically(path: directory.path + "/commands.json", text: text)
        } else {
            store(directory, backend).save(journal)
        }
        #expect(store(directory, backend, device: "bedroom").load() == nil, "\(what): nothing in it is used")
        let warnings = backend.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1 && warnings.first?.message.contains(reason) == true, "\(what): \(warnings.map(\.message))")
        #expect(warnings.first?.message.contains("set aside as \(directory.path)/commands.json.unusable") == true)
        #expect(try FileIO.names(in: directory.path) == ["commands.json.unusable"])
        #expect(store(directory, backend, device: "bedroom").load() == nil, "the next start finds no journal")
        #expect(backend.entries.filter { $0.level == .warning }.count == 1, "and says nothing more")
    }

    @Test func aFIFOInItsPlaceIsRefusedWithoutBlocking() throws {
        let directory = try StoreTests.Directory()
        let backend = MemoryLogBackend()
        #expect(mkfifo(directory.path + "/commands.json", 0o600) == 0)
        #expect(store(directory, backend).load() == nil)
        #expect(backend.entries.contains { $0.level == .warning && $0.message.contains("not a regular file") })
    }

    @Test func offNeitherReadsNorWrites() throws {
        let directory = try StoreTests.Directory()
        let backend = MemoryLogBackend()
        store(directory, backend).save(journal)
        let off = store(directory, backend, enabled: false)
        #expect(off.load() == nil)
        off.save(CommandJournal(deviceID: "kitchen"))
        #expect(store(directory, backend).load() == journal, "the file is untouched")
        #expect(backend.entries.contains { $0.message.contains("command journal off") })
    }
}
